/** The layer rule (scripts/lint/layers.mjs) as ESLint runs it on this repository's config. */
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, MAIN_LAYERS } from '../../scripts/lint/layers.mjs';

const ROOT = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: ROOT });

async function layerErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((message) => message.ruleId === 'ward/layers').map((message) => message.message);
}

describe('the layer rule', () => {
  it('test_a_domain_folder_importing_the_app_layer_fails_lint', async () => {
    expect(await layerErrors('main/store/example.ts', "import { WardApp } from '../app/ward-app.js';\nexport const x = WardApp;\n")).toEqual([
      'main/store may not import main/app (layers: base ← domain ← app ← adapters; see scripts/lint/layers.mjs)',
    ]);
  });

  it('test_a_domain_folder_importing_a_higher_domain_folder_fails_lint', async () => {
    expect(await layerErrors('main/broker/example.ts', "export { RunPermissions } from '../permissions/run-permissions.js';\n")).toHaveLength(1);
    expect(await layerErrors('main/base/example.ts', "export type { Namespace } from '../namespaces/namespace.js';\n")).toHaveLength(1);
  });

  it('test_dynamic_imports_count_too', async () => {
    expect(await layerErrors('main/runner/example.ts', "export const load = () => import('../app/self-test.js');\n")).toHaveLength(1);
  });

  it('test_downward_imports_and_adapters_pass', async () => {
    expect(await layerErrors('main/app/example.ts', "export { DataFolder } from '../store/data-folder.js';\n")).toEqual([]);
    expect(await layerErrors('main/cli/example.ts', "export { WardApp } from '../app/ward-app.js';\n")).toEqual([]);
    expect(await layerErrors('main/electron/example.ts', "export { startDesktop } from '../ipc/desktop.js';\n")).toEqual([]);
  });

  it('test_the_renderer_and_the_shared_contract_import_nothing_of_main', async () => {
    expect(await layerErrors('renderer/src/example.ts', "export { WardError } from '../../main/base/errors.js';\n")).toHaveLength(1);
    expect(await layerErrors('renderer/src/example.ts', "export { escapeForDisplay } from '../../common/display.js';\n")).toEqual([]);
    // Types of the error codes are the one thing the contract takes from main (erased at build).
    expect(await layerErrors('preload/contract.ts', "import type { WardErrorCode } from '../main/base/errors.js';\nexport type C = WardErrorCode;\n")).toEqual([]);
    expect(await layerErrors('preload/contract.ts', "import { WardError } from '../main/base/errors.js';\nexport const E = WardError;\n")).toHaveLength(1);
  });

  it('test_a_new_folder_must_be_placed_in_the_layer_map', async () => {
    expect(await layerErrors('main/newthing/example.ts', "export { describeError } from '../base/errors.js';\n")).toEqual([
      'main/newthing is not in the layer map (scripts/lint/layers.mjs): add it where it belongs',
    ]);
  });

  it('test_an_adapter_importing_a_domain_folder_fails_lint_and_says_to_go_through_the_app_layer', async () => {
    for (const adapter of ADAPTERS) {
      expect(await layerErrors(`main/${adapter}/example.ts`, "import { DataFolder } from '../store/data-folder.js';\nexport const x = DataFolder;\n")).toEqual([
        `main/${adapter} is an adapter: it imports only main/app, main/base and common/ (not main/store); call or add an app service`,
      ]);
      // A type is an import too: the adapters' vocabulary comes from app/.
      expect(await layerErrors(`main/${adapter}/example.ts`, "import type { JournalEvent } from '../store/journal.js';\nexport type E = JournalEvent;\n")).toHaveLength(1);
    }
    expect(await layerErrors('main/cli/commands/example.ts', "export { parsePermissionFlags } from '../../permissions/grants.js';\n")).toHaveLength(1);
  });

  it('test_every_way_of_naming_a_module_is_checked', async () => {
    const app = "'../app/ward-app.js'";
    const forms = [
      `export type App = typeof import(${app});\n`,
      `export type A = import(${app}).WardApp;\n`,
      `import { createRequire } from 'node:module';\nexport const m = createRequire(import.meta.url)(${app});\n`,
      `export const m = require(${app});\n`,
      'export const load = () => import(`../app/ward-app.js`);\n',
    ];
    for (const source of forms) expect(await layerErrors('main/store/example.ts', source), source).toHaveLength(1);
    expect(await layerErrors('main/store/example.ts', 'export const load = (name: string) => import(`../${name}.js`);\n')).toEqual([
      'a module named by a computed path cannot be checked against the layers: name it with a string',
    ]);
    // A package resolved by name is not a layer question.
    expect(await layerErrors('main/policy/example.ts', "import { createRequire } from 'node:module';\nimport { fileURLToPath } from 'node:url';\nexport const p = createRequire(import.meta.url)(fileURLToPath(import.meta.resolve('plist')));\n")).toEqual([]);
  });

  it('test_a_file_directly_in_main_belongs_to_no_layer_and_fails_lint', async () => {
    expect(await layerErrors('main/helpers.ts', 'export const x = 1;\n')).toEqual(['main/helpers.ts sits directly in main/: put it in the folder of its layer']);
  });

  it('test_the_layer_map_lists_only_edges_the_code_uses', () => {
    const used = new Map<string, Set<string>>();
    const scan = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) scan(file);
        else if (/\.tsx?$/.test(entry.name)) {
          const from = path.relative(path.join(ROOT, 'main'), file).split(path.sep)[0]!;
          for (const [, source] of fs.readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\(\s*|require\(\s*)['"](\.[^'"]+)['"]/g)) {
            const [area, folder, ...rest] = path.relative(ROOT, path.resolve(path.dirname(file), source!)).split(path.sep);
            if (area === 'main' && rest.length > 0 && folder !== from) used.set(from, (used.get(from) ?? new Set()).add(folder!));
          }
        }
      }
    };
    scan(path.join(ROOT, 'main'));
    const layers = MAIN_LAYERS as Record<string, readonly string[]>;
    const unused = Object.entries(layers).flatMap(([from, allowed]) => allowed.filter((to) => !used.get(from)?.has(to)).map((to) => `${from} → ${to}`));
    expect(unused).toEqual([]);
  });

  it('test_the_layer_map_has_no_cycle_and_every_main_folder_is_in_it', () => {
    const folders = fs.readdirSync(path.join(ROOT, 'main'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    for (const folder of folders) expect(MAIN_LAYERS, `main/${folder}`).toHaveProperty(folder);
    const layers = MAIN_LAYERS as Record<string, readonly string[]>;
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (folder: string, trail: string[]): void => {
      if (done.has(folder)) return;
      if (visiting.has(folder)) throw new Error(`cycle: ${[...trail, folder].join(' → ')}`);
      visiting.add(folder);
      for (const next of layers[folder] ?? []) visit(next, [...trail, folder]);
      visiting.delete(folder);
      done.add(folder);
    };
    for (const folder of Object.keys(layers)) expect(() => visit(folder, [])).not.toThrow();
  });
});
