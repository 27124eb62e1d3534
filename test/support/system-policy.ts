import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './temp.js';

/**
 * A command prefix that runs `ward` with `policy` at /etc/ward/policy.json, the Linux admin
 * store, without touching the machine's /etc: a copy of /etc holding the policy is mounted over
 * it in a private mount namespace (bwrap, as root: files the test writes are then root-owned, as
 * the store requires).
 */
export function underSystemPolicy(policy: object): readonly string[] {
  const etc = path.join(tempDir('ward-etc-'), 'etc');
  fs.cpSync('/etc', etc, { recursive: true, verbatimSymlinks: true });
  fs.mkdirSync(path.join(etc, 'ward'), { mode: 0o755 });
  fs.writeFileSync(path.join(etc, 'ward', 'policy.json'), JSON.stringify(policy), { mode: 0o644 });
  return ['bwrap', '--dev-bind', '/', '/', '--bind', etc, '/etc', '--'];
}

/**
 * An admin policy file to name with WARD_POLICY (world-readable, as the admin stores require):
 * `value` as JSON, or a string written as it is (to test text the parser must refuse).
 */
export function policyFile(value: unknown): string {
  const file = path.join(tempDir('ward-policy-'), 'policy.json');
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  fs.chmodSync(file, 0o644);
  return file;
}
