import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../main/base/errors.js';
import { COMMITTED_PIN, expectedCliVersion, locatePlatformBinary, platformKey, runsOnGlibc, verifyPinnedCli } from '../../main/runner/pin.js';

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('pinned CLI verification (R1)', () => {
  it('test_accepts_the_installed_binary_version_from_package_json_hash_from_cli_pin_json', async () => {
    const pinned = await verifyPinnedCli();
    expect(pinned.version).toBe(expectedCliVersion().version);
    expect(pinned.version).toBe(COMMITTED_PIN.version);
    expect(pinned.path).toBe(locatePlatformBinary().binary);
    expect(pinned.sha256).toBe(COMMITTED_PIN.sha256[platformKey()]);
  });

  it('test_refuses_a_binary_whose_bytes_differ_from_the_pin_and_notices_a_file_changed_in_place', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-pin-'));
    const fake = path.join(dir, 'claude');
    fs.writeFileSync(fake, 'not the pinned CLI');
    const error = await rejection(verifyPinnedCli({ binaryPath: fake }));
    expect(isWardError(error, 'cli_pin_mismatch')).toBe(true);
    expect(error.message).toMatch(/has SHA-256 [0-9a-f]{64}, pinned [0-9a-f]{64}; refusing to run it/);

    // A pin made for this file passes; rewriting the file (same size) is caught despite the cache.
    const { createHash } = await import('node:crypto');
    const pin = { version: COMMITTED_PIN.version, sha256: { [platformKey()]: createHash('sha256').update('not the pinned CLI').digest('hex') } };
    await expect(verifyPinnedCli({ binaryPath: fake, pin })).resolves.toMatchObject({ path: fake });
    fs.writeFileSync(fake, 'NOT the pinned CLI');
    expect(isWardError(await rejection(verifyPinnedCli({ binaryPath: fake, pin })), 'cli_pin_mismatch')).toBe(true);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('test_refuses_a_pin_for_another_version_and_a_platform_without_a_pinned_hash', async () => {
    const otherVersion = await rejection(verifyPinnedCli({ pin: { ...COMMITTED_PIN, version: '9.9.9' } }));
    expect(otherVersion.message).toMatch(/cli-pin.json pins @anthropic-ai\/claude-code 9.9.9 but package.json depends on/);
    const noHash = await rejection(verifyPinnedCli({ platformKey: 'plan9-mips' }));
    expect(noHash.message).toBe('no pinned SHA-256 for platform plan9-mips in cli-pin.json; Ward does not run an unverified CLI');
  });

  it('test_remembers_a_verified_hash_across_processes_only_while_the_binary_is_unchanged', async () => {
    const { createHash } = await import('node:crypto');
    const { execFileSync } = await import('node:child_process');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-pin-cache-'));
    const binary = path.join(dir, 'claude');
    const cache = path.join(dir, 'home', 'cli-verified.json');
    fs.writeFileSync(binary, 'pinned bytes');
    const pinned = createHash('sha256').update('pinned bytes').digest('hex');
    const verify = (file = binary) =>
      execFileSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'verify-pin.ts'), file, pinned, cache], { encoding: 'utf8' });

    expect(verify()).toBe('ok');
    expect(fs.statSync(cache).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(cache, 'utf8'))).toMatchObject({ records: [{ file: binary, sha256: pinned }] });
    expect(verify()).toBe('ok');

    // A second install's CLI (the desktop app's and a separate `ward`'s) is remembered beside the first, not instead of it.
    const other = path.join(dir, 'claude-other');
    fs.writeFileSync(other, 'pinned bytes');
    expect(verify(other)).toBe('ok');
    expect(JSON.parse(fs.readFileSync(cache, 'utf8'))).toMatchObject({ records: [{ file: other, sha256: pinned }, { file: binary, sha256: pinned }] });
    // A record that vouches for a changed hash is believed only for its own file: a lie about one binary is caught by the other's check.
    const lie = JSON.parse(fs.readFileSync(cache, 'utf8')) as { records: { sha256: string }[] };
    lie.records[1]!.sha256 = 'f'.repeat(64);
    fs.writeFileSync(cache, JSON.stringify(lie));
    expect(verify(other)).toBe('ok');
    expect(verify()).toBe('cli_pin_mismatch');
    fs.writeFileSync(cache, JSON.stringify({ records: [] }));

    // Same size, new bytes: the ctime moved, so the record no longer vouches for the file.
    fs.writeFileSync(binary, 'Pinned bytes');
    expect(verify()).toBe('cli_pin_mismatch');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('test_tells_glibc_from_musl_by_the_mapped_c_library_as_the_process_report_does', () => {
    // Issue 29: the platform package is found without a diagnostic report (6-20 ms before each spawn).
    const report = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime !== undefined;
    expect(runsOnGlibc()).toBe(report);
    const line = (library: string) => `7f0000000000-7f0000001000 r-xp 00000000 08:01 1234 ${library}\n`;
    expect(runsOnGlibc(() => line('/usr/lib/x86_64-linux-gnu/libc.so.6'))).toBe(true);
    expect(runsOnGlibc(() => line('/lib/libc-2.31.so'))).toBe(true);
    expect(runsOnGlibc(() => line('/lib/ld-musl-x86_64.so.1'))).toBe(false);
    expect(runsOnGlibc(() => line('/usr/lib/libc.musl-aarch64.so.1'))).toBe(false);
    // Neither library mapped (a static build) or no /proc: the report decides.
    expect(runsOnGlibc(() => line('/usr/bin/node'))).toBe(report);
    expect(
      runsOnGlibc(() => {
        throw new Error('ENOENT: /proc');
      }),
    ).toBe(report);
  });
});
