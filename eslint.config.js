// Lint enforces the process boundaries: everything in main/ but main/electron/ stays Electron-free
// (it runs under plain Node as the `ward` command); the renderer imports no Node; common/ and the
// IPC contract import neither. The layer rule (scripts/lint/layers.mjs) keeps imports going down.
import tseslint from 'typescript-eslint';
import { layersRule } from './scripts/lint/layers.mjs';

const NODE_BUILTINS = ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'net', 'http', 'https', 'stream', 'util'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-artifacts/**', 'release/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: "Property[key.name='shell'][value.value=true]", message: 'R2: spawn with an argv array, never a shell' }],
    },
  },
  {
    files: ['main/**/*.ts', 'common/**/*.ts', 'preload/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    plugins: { ward: { rules: { layers: layersRule } } },
    rules: { 'ward/layers': 'error' },
  },
  {
    files: ['main/**/*.ts'],
    ignores: ['main/electron/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'main/ runs under plain Node (the ward command): keep Electron in main/electron/' }] }],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: [...NODE_BUILTINS, 'electron', '**/main/**'], message: 'the renderer is a sandboxed page: no Node, no Electron, no main-process code' }] }],
    },
  },
  {
    // Size limits for all source: a file over 400 lines or a function over 80 is split. Every line
    // counts, blank and comment lines too, so the limit is what `wc -l` shows.
    files: ['main/**/*.ts', 'common/**/*.ts', 'preload/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  {
    files: ['preload/contract.ts', 'common/**/*.ts'],
    rules: {
      // What of main/ these may import (types from main/base/errors.ts only) is the layer rule's job.
      'no-restricted-imports': ['error', { patterns: [{ group: [...NODE_BUILTINS, 'electron'], message: 'common/ and the IPC contract are shared by every process: they import neither Node nor Electron' }] }],
    },
  },
);
