// Builds what each target needs: `main` (the ward CLI + Electron main + preload, via esbuild)
// or `all` (also the renderer, via Vite). Bundled ESM keeps `ward` cold start short.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';

const target = process.argv[2] ?? 'all';
if (!['main', 'all'].includes(target)) {
  console.error(`usage: node scripts/build.mjs main|all (got ${target})`);
  process.exit(2);
}

/**
 * Pure-JS packages made of many small ES modules are bundled into Ward's chunks: Node 20 loads
 * each module file on its own, and zod (with zod-to-json-schema) and the MCP SDK were 180 of the
 * 310 modules a `ward run` loaded, most of its module-load time (issue 19); jsdiff's 17 files were
 * loaded by every app that starts (issue 29: ~35 ms of a `ward run` under load). Every other package
 * stays external: native modules, packages that find files next to their own code (the sandbox
 * runtime's helpers, the pinned CLI), and CommonJS packages, which Node loads quickly.
 */
const BUNDLED_PACKAGES = new Set(['zod', 'zod-to-json-schema', '@modelcontextprotocol/sdk', '@modelcontextprotocol/server', '@modelcontextprotocol/core', '@modelcontextprotocol/client', 'diff']);
const externalUnlessBundled = {
  name: 'external-unless-bundled',
  setup(esbuild) {
    // zod's error messages in 50 languages are half of what its chunk makes every command parse
    // (370 of 755 KB); Ward's messages are English, so only zod's English locale is bundled.
    esbuild.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-english-locale', namespace: 'ward' } : undefined,
    );
    esbuild.onLoad({ filter: /^zod-english-locale$/, namespace: 'ward' }, () => ({
      contents: "export { default as en } from 'zod/v4/locales/en.js';",
      resolveDir: process.cwd(),
    }));
    esbuild.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
      return BUNDLED_PACKAGES.has(name) ? undefined : { path: args.path, external: true };
    });
  },
};

// Only the hashed chunks go stale; entries are overwritten in place.
await rm('dist/cli/chunks', { recursive: true, force: true });
await rm('dist/chunks', { recursive: true, force: true });

const nodeBuild = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [externalUnlessBundled],
  sourcemap: 'linked',
  logLevel: 'warning',
  chunkNames: 'chunks/[name]-[hash]',
};

/**
 * `ward review` and `ward verify-bundle` (main/cli/bundle-main.ts) are one file of their own: esbuild
 * shares code between a build's chunks file by file, so in the CLI's chunks they loaded all of zod
 * and the app's shared modules; built alone, only the zod its event and statement schemas use
 * (issue 27: a reviewer's first screen within a second). The CLI's entry imports that file as it is.
 */
const bundleCommandsApart = {
  name: 'bundle-commands-apart',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^\.\/bundle-main\.js$/ }, (args) => (/[\\/]main[\\/]cli[\\/]entry\.ts$/.test(args.importer) ? { path: args.path, external: true } : undefined));
  },
};
await build({ ...nodeBuild, plugins: [...nodeBuild.plugins, bundleCommandsApart], entryPoints: ['main/cli/entry.ts'], outdir: 'dist/cli' });
await build({ ...nodeBuild, splitting: false, entryPoints: ['main/cli/bundle-main.ts'], outfile: 'dist/cli/bundle-main.js' });

// The Electron main is built on its own (no chunks shared with the CLI), so every package it
// imports resolves from dist/electron/ first: scripts/start-desktop.mjs puts the Electron-ABI
// builds of the native modules in dist/electron/node_modules, while the CLI and the tests keep
// the Node builds in ./node_modules.
await rm('dist/electron/chunks', { recursive: true, force: true });
await build({ ...nodeBuild, entryPoints: ['main/electron/main.ts'], outdir: 'dist/electron' });

// The preload runs in a sandboxed renderer: one CommonJS file, only `electron` external.
if (existsSync('preload/bridge.ts')) {
  await build({
    entryPoints: ['preload/bridge.ts'],
    outfile: 'dist/preload/bridge.cjs',
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'chrome130',
    external: ['electron'],
    logLevel: 'warning',
  });
}

if (target === 'all' && existsSync('renderer/vite.config.ts')) {
  const { build: viteBuild } = await import('vite');
  await viteBuild({ configFile: 'renderer/vite.config.ts', logLevel: 'warn' });
}
