/**
 * Issue 27: `ward review` shows its first screen within a second. What makes it so is asserted
 * here without a clock (bench/export.ts measures the time): `ward review` and `ward
 * verify-bundle` load one file of Ward's code beyond what every command loads before its command list, never the chunks the other
 * commands share (all of zod, the app's stores and services, the sandbox runtime), and that file
 * holds no more of Ward than the bundle reader, the event schemas and the printer.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeBundle } from '../export/support.js';
import { tempDir } from '../support/temp.js';
import { REPO_ROOT, WARD_BIN } from '../support/ward-cli.js';

/** `ward ARGS` under a module hook that lists every file the process loads; the files of this checkout, relative to it. */
async function loadedFiles(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string; files: string[] }> {
  const dir = tempDir();
  const log = path.join(dir, 'loaded.txt');
  const hooks = path.join(dir, 'hooks.mjs');
  fs.writeFileSync(hooks, `import fs from 'node:fs';\nexport async function load(url, context, next) {\n  fs.appendFileSync(${JSON.stringify(log)}, url + '\\n');\n  return next(url, context);\n}\n`);
  const register = path.join(dir, 'register.mjs');
  fs.writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const child = spawn(process.execPath, ['--import', pathToFileURL(register).href, WARD_BIN, ...args], { env: { PATH: process.env.PATH, WARD_HOME: path.join(dir, 'never-made') }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ward ${args[0]} did not finish within 60 s`));
    }, 60_000);
    child.on('error', reject);
    child.on('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
  const urls = fs.readFileSync(log, 'utf8').split('\n').filter((url) => url.startsWith('file:'));
  const root = pathToFileURL(REPO_ROOT).href;
  // node_modules is a link in a worktree: a package's files are named by where they really are.
  const files = urls.map((url) => (url.startsWith(`${root}/`) ? url.slice(root.length + 1) : url));
  return { code, stdout, stderr, files };
}

describe('ward review and verify-bundle start lean (issue 27)', () => {
  it('test_review_and_verify_bundle_load_only_the_entry_and_their_own_build', async () => {
    const { file } = makeBundle(2);
    // What every command loads before the command list (main-*.js, which `ward --version` loads
    // next, after the entry's own imports and io), then the bundle commands' own file.
    const entry = await loadedFiles(['--version']);
    expect(entry.code, entry.stderr).toBe(0);
    const commands = entry.files.findIndex((file) => /^dist\/cli\/chunks\/main-[^/]+\.js$/.test(file));
    expect(commands).toBeGreaterThan(0);
    // A module's imports load concurrently: the order of siblings is not fixed, the set is.
    const lean = [...entry.files.slice(0, commands), 'dist/cli/bundle-main.js'].sort();
    const review = await loadedFiles(['review', file]);
    expect(review.code, review.stderr).toBe(0);
    expect(review.stdout).toContain('is intact and signed');
    expect([...review.files].sort()).toEqual(lean);
    const verify = await loadedFiles(['verify-bundle', '--json', file]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true });
    expect([...verify.files].sort()).toEqual(lean);
    // Their --help is the one every command has, from the command list.
    const help = await loadedFiles(['review', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: ward review FILE/);
  });

  it('test_the_bundle_commands_build_holds_the_bundle_reader_the_event_schemas_and_the_printer_only', () => {
    const map = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'dist/cli/bundle-main.js.map'), 'utf8')) as { sources: string[] };
    const sources = map.sources.map((source) => source.replace(/\\/g, '/'));
    const packages = new Set(sources.filter((source) => source.includes('/node_modules/')).map((source) => source.split('/node_modules/').pop()!.split('/')[0]));
    expect([...packages]).toEqual(['zod']);
    const ward = sources.filter((source) => !source.includes('/node_modules/')).map((source) => source.replace(/^(\.\.\/)+/, ''));
    const allowed = /^(common\/[^/]+|main\/base\/[^/]+|main\/export\/[^/]+|main\/store\/chain|main\/app\/bundle-review|main\/cli\/(?:commands\/)?[^/]+)\.ts$/;
    expect(ward.filter((source) => !allowed.test(source))).toEqual([]);
    expect(ward).toContain('main/cli/commands/review.ts');
  });
});
