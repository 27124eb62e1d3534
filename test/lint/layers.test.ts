/** The layer rule (scripts/lint/layers.mjs) as ESLint runs it on this repository's config. */
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { MAIN_LAYERS } from '../../scripts/lint/layers.mjs';

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
