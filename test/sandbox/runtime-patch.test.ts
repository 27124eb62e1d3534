/**
 * The install-time edits to the sandbox runtime (scripts/patch-dependencies.mjs): they are applied
 * to the runtime Ward runs, once, only to the version they were written for, and an install whose
 * text no longer matches fails naming the file instead of running unedited. The runtime's `which`
 * starts no process (this is a unit test: starting one would fail it); runtime-which.test.ts
 * compares what it finds with the `which` command. The runtime loads node-forge only when its TLS
 * termination signs something, and that still works.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyPatch, PATCHES } from '../../scripts/patch-dependencies.mjs';

const [runtimePatch, whichPatch, ...forgePatches] = PATCHES;
const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function fakePackage(version: string, text: string): { root: string; file: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-patch-'));
  scratch.push(root);
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: runtimePatch!.pkg, version }));
  const file = path.join(root, runtimePatch!.file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return { root, file };
}

const original = () => `function start() {\n${runtimePatch!.edits.map(([before]) => before).join('    // between\n')}}\n`;

/** The installed file a patch edits, checked to hold every edit (an install that skipped postinstall, npm --ignore-scripts, shows here). */
function installedFile(patch: (typeof PATCHES)[number]): string {
  const file = path.join(path.dirname(createRequire(import.meta.url).resolve(`${patch.pkg}/package.json`)), patch.file);
  const text = fs.readFileSync(file, 'utf8');
  for (const [before, after] of patch.edits) {
    expect(text).toContain(after);
    expect(text).not.toContain(before);
  }
  return file;
}

describe('the sandbox runtime as installed', () => {
  it('test_the_installed_runtime_looks_for_its_bridge_sockets_every_5_ms_not_after_100_ms', () => {
    installedFile(runtimePatch!);
  });

  it('test_the_edit_applies_once_and_a_second_install_leaves_the_file_as_it_is', () => {
    const { root, file } = fakePackage(runtimePatch!.version, original());
    expect(applyPatch(root, runtimePatch!)).toBe('edited');
    const edited = fs.readFileSync(file, 'utf8');
    expect(edited).toContain('setTimeout(resolve, 5)');
    expect(edited).toContain('const maxAttempts = 121;');
    expect(edited).toContain('export async function linuxGetMandatoryDenyPaths(');
    expect(applyPatch(root, runtimePatch!)).toBe('applied');
    expect(fs.readFileSync(file, 'utf8')).toBe(edited);
  });

  it('test_another_version_is_left_as_installed_and_changed_text_fails_naming_the_file', () => {
    const other = fakePackage('0.0.99', original());
    expect(applyPatch(other.root, runtimePatch!)).toBe('other-version');
    expect(fs.readFileSync(other.file, 'utf8')).toBe(original());

    const changed = fakePackage(runtimePatch!.version, 'function start() { /* rewritten upstream */ }\n');
    expect(() => applyPatch(changed.root, runtimePatch!)).toThrow(`${runtimePatch!.pkg}@${runtimePatch!.version} ${runtimePatch!.file} no longer holds the text the edit expects`);
    expect(fs.readFileSync(changed.file, 'utf8')).toBe('function start() { /* rewritten upstream */ }\n');
  });

  it('test_the_installed_which_finds_bwrap_without_starting_a_process', async () => {
    const { whichSync } = (await import(installedFile(whichPatch!))) as { whichSync(bin: string): string | null };
    expect(whichSync('bwrap')).toBe('/usr/bin/bwrap');
    expect(whichSync('ward-no-such-program')).toBeNull();
  });

  it('test_the_installed_runtime_loads_node_forge_only_when_its_tls_termination_signs_and_that_still_works', async () => {
    const files = forgePatches.map((patch) => installedFile(patch));
    const forgeLoaded = () => Object.keys(createRequire(files[0]!).cache).some((file) => file.includes(`${path.sep}node-forge${path.sep}`));
    await import(path.join(path.dirname(files[0]!), 'sandbox-manager.js'));
    expect(forgeLoaded()).toBe(false);

    type SecureContextFor = (ca: unknown, hostname: string) => import('node:tls').SecureContext;
    const mitmCa = (await import(files[0]!)) as {
      generateCa(): { certPem: string; keyPem: string; cert: unknown };
      validateCaPair(certPem: string, keyPem: string): { ok: boolean };
      generateEmptyCrl(cert: unknown, keyPem: string): Buffer;
      createMitmCA(opts: { caCertPem: string; caKeyPem: string }): unknown;
      disposeMitmCA(ca: unknown): Promise<void>;
    };
    const { secureContextFor } = (await import(files[1]!)) as { secureContextFor: SecureContextFor };
    const { certPem, keyPem, cert } = mitmCa.generateCa();
    expect(forgeLoaded()).toBe(true);
    expect(certPem).toContain('-----BEGIN CERTIFICATE-----');
    expect(mitmCa.validateCaPair(certPem, keyPem).ok).toBe(true);
    // DER: a SEQUENCE (0x30).
    expect(mitmCa.generateEmptyCrl(cert, keyPem)[0]).toBe(0x30);
    const ca = mitmCa.createMitmCA({ caCertPem: certPem, caKeyPem: keyPem });
    expect(secureContextFor(ca, 'ward.example').context).toBeDefined();
    await mitmCa.disposeMitmCA(ca);
  });
});
