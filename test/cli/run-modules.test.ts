/**
 * Issue 29: what a `ward run` loads before its turn. The OpenTelemetry exporter (some 250
 * CommonJS modules, seconds under load) is loaded only where the admin policy names an OTLP
 * audit sink (test/audit/otlp-real-run.test.ts sends through it). The packages Ward bundles load
 * from its chunks, not file by file from node_modules.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { REPO_ROOT, ward } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
const scratch: string[] = [];

afterEach(async () => {
  for (const dir of scratch.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  await provider?.close();
  provider = undefined;
});

describe('what ward run loads', () => {
  it('test_a_ward_run_loads_no_opentelemetry_module_without_an_otlp_sink_and_no_bundled_package_file_by_file', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'Hello.' }] }]);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-modules-home-'));
    scratch.push(home);
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    const loaded = path.join(home, 'loaded-modules');
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: home,
      WARD_HOME: home,
      WARD_SANDBOX: 'off',
      ANTHROPIC_API_KEY: CANARY_KEY,
      WARD_MODEL_BASE_URL: provider.url,
      NODE_OPTIONS: `--import ${pathToFileURL(path.join(REPO_ROOT, 'test', 'fixtures', 'loaded-modules', 'record.mjs')).href}`,
      WARD_TEST_LOADED_MODULES: loaded,
    };
    const run = await ward(['run', '--new', '--', 'hi'], { env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const modules = fs.readFileSync(loaded, 'utf8').split('\n');
    // The record works: the journal's SQLite binding is there.
    expect(modules.some((file) => file.includes(`${path.sep}better-sqlite3${path.sep}`))).toBe(true);
    expect(modules.filter((file) => file.includes(`${path.sep}@opentelemetry${path.sep}`))).toEqual([]);
    // The pure-JS packages of many small ES modules are inside Ward's chunks (scripts/build.mjs):
    // Node 20 resolves, reads and compiles each file on its own (jsdiff alone is 17 files).
    const esm = fs.readFileSync(`${loaded}.esm`, 'utf8').trim().split('\n');
    expect(esm.some((url) => url.includes('/dist/cli/chunks/'))).toBe(true);
    const bundled = ['zod', 'zod-to-json-schema', '@modelcontextprotocol', 'diff'];
    expect(esm.filter((url) => bundled.some((name) => url.includes(`/node_modules/${name}/`)))).toEqual([]);
    // The run said it was starting (the audit sender holds from then on) before the commands and
    // their packages loaded: the program's entry alone came first.
    const announced = fs.readFileSync(`${loaded}.announced`, 'utf8').trim().split('\n');
    expect(announced.some((url) => /\/dist\/cli\/chunks\/main-[^/]*\.js$/.test(url))).toBe(true);
    expect(announced.some((url) => url.includes('/node_modules/@anthropic-ai/sandbox-runtime/'))).toBe(true);
    expect(announced.some((url) => url.endsWith('/dist/cli/entry.js'))).toBe(false);
    expect(esm.indexOf(announced[0]!)).toBeLessThanOrEqual(10);
  });
});
