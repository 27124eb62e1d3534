import { describe, expect, it } from 'vitest';
import { COMMITTED_PIN } from '../../main/runner/pin.js';
import { policyFile, underSystemPolicy } from '../support/system-policy.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

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

  it('test_a_cli_versions_list_without_the_cli_this_ward_carries_is_an_error_as_doctor_and_run_say', async () => {
    const file = policyFile({ cliVersions: ['9.9.9'] });
    const env = { WARD_HOME: tempDir(), WARD_POLICY: file };
    const problem = `cliVersions allows 9.9.9, but this Ward carries Claude CLI ${COMMITTED_PIN.version}: every run is refused; install a Ward release that carries an allowed version`;
    const shown = await ward(['policy', 'show'], { env });
    expect(shown.code).toBe(7);
    expect(shown.stdout).toContain(`error: ${problem}`);
    expect(shown.stdout).toContain('Ward refuses to start runs until the policy is fixed.');
    const json = await ward(['policy', 'show', '--json'], { env });
    expect(json.code).toBe(7);
    expect((JSON.parse(json.stdout) as { errors: string[] }).errors).toEqual([problem]);
  });

  it('test_an_otlp_audit_sink_is_shown_with_its_endpoint_as_the_policy_reads_it', async () => {
    const under = underSystemPolicy({ auditSink: { otlp: { endpoint: 'https://OTEL.example.com/v1/logs' } } });
    const shown = await ward(['policy', 'show'], { env: { WARD_HOME: tempDir() }, under });
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    const row = lines.findIndex((line) => line.startsWith('auditSink '));
    expect(lines.slice(row, row + 2).join('\n')).toContain('otlp');
    expect(lines.slice(row, row + 2).join('\n')).toContain('{"endpoint":"https://otel.example.com/v1/logs"}');
    expect(lines[row]).toMatch(/mandatory +\/etc\/ward\/policy\.json: auditSink$/);
  });

  it('test_a_wide_value_is_listed_entry_by_entry_below_its_row_each_whole_and_escaped', async () => {
    const files = { name: 'files', command: '/opt/mcp/bin/files', args: ['--root', '/srv/projects'] };
    const under = underSystemPolicy({ reason: 'IT \u202e evil', managedConnections: [{ name: 'tracker', url: 'https://mcp.example.com/mcp' }, files] });
    const shown = await ward(['policy', 'show'], { env: { WARD_HOME: tempDir() }, under });
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    const row = lines.findIndex((line) => line.startsWith('managedConnections '));
    expect(lines[row]).toMatch(/^managedConnections +\(2 entries below\) +mandatory +\/etc\/ward\/policy\.json: managedConnections$/);
    expect(lines.slice(row + 1, row + 3)).toEqual(['  - {"name":"tracker","url":"https://mcp.example.com/mcp"}', `  - ${JSON.stringify(files)}`]);
    expect(lines.find((line) => line.startsWith('reason '))).toMatch(/^reason +"IT \\u\{202e\} evil" +mandatory/);
  });
});
