import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

function policyFile(value: unknown): string {
  const file = path.join(tempDir(), 'policy.json');
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value), { mode: 0o644 });
  return file;
}

describe('ward policy show', () => {
  it('test_lists_every_key_with_value_level_and_source_like_chrome_policy', async () => {
    const file = policyFile({ reason: 'Example IT', forbid: ['run'], colour: 'blue', recommended: { sandbox: 'require' } });
    const env = { WARD_HOME: tempDir(), WARD_POLICY: file };
    const text = await ward(['policy', 'show'], { env });
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe(`Admin policy from ${file}`);
    expect(lines.find((line) => line.startsWith('forbid '))).toMatch(new RegExp(`^forbid +\\["run"\\] +mandatory +${file}: forbid$`));
    expect(lines.find((line) => line.startsWith('sandbox '))).toMatch(new RegExp(`^sandbox +"require" +recommended +${file}: recommended.sandbox$`));
    expect(lines.find((line) => line.startsWith('approvalTimeoutSeconds '))).toMatch(/^approvalTimeoutSeconds +\(not set: 120\)$/);
    expect(text.stdout).toContain(`warning: ${file}: colour: unknown key, ignored`);
    expect(text.stdout).toContain('Changes to the policy take effect when Ward next starts.');

    const json = await ward(['policy', 'show', '--json'], { env });
    const view = JSON.parse(json.stdout) as { sources: string[]; settings: Array<{ key: string; set: boolean; level: string | null }>; warnings: string[]; errors: string[] };
    expect(view.sources).toEqual([file]);
    expect(view.settings.map((setting) => setting.key)).toContain('managedConnections');
    expect(view.settings.find((setting) => setting.key === 'forbid')).toMatchObject({ set: true, level: 'mandatory', value: '["run"]', sources: [`${file}: forbid`] });
    expect(view.errors).toEqual([]);
  });

  it('test_a_broken_policy_is_shown_with_its_errors_and_exits_7', async () => {
    const file = policyFile({ connections: ['github'], approvalTimeoutSeconds: 99999 });
    const shown = await ward(['policy', 'show'], { env: { WARD_HOME: tempDir(), WARD_POLICY: file } });
    expect(shown.code).toBe(7);
    expect(shown.stdout).toContain(`error: ${file}: approvalTimeoutSeconds: Too big: expected number to be <=3600`);
    expect(shown.stdout).toContain(`error: ${file}: connections: "connections" matched connections by the name a user gives them`);
    expect(shown.stdout).toContain('Ward refuses to start runs until the policy is fixed.');
  });
});
