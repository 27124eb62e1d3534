/** Issue 12 #2 (S2): Ward's data folder is never shown to an agent, whatever the workspace or the grants. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertOutsideWardData, wardDataProtection } from '../../main/app/ward-data.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { noOnePrompter } from '../../main/permissions/prompter.js';
import { RunPermissions } from '../../main/permissions/run-permissions.js';
import type { AuditRecord } from '../../main/permissions/audit.js';
import { wardErrorOf } from '../support/errors.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

function layout() {
  const user = fs.realpathSync(tempDir('ward-user-'));
  const home = path.join(user, '.config', 'Ward');
  const workspace = path.join(home, 'namespaces', 'abc', 'workspaces', 'conv-1');
  const configDir = path.join(home, 'namespaces', 'abc', 'claude');
  for (const dir of [workspace, configDir, path.join(user, 'project')]) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(home, 'namespaces', 'abc', 'ward.db'), 'db');
  fs.writeFileSync(path.join(workspace, 'notes.md'), 'notes');
  return { user, home, workspace, configDir };
}

describe("Ward's data folder", () => {
  it('test_a_workspace_or_grant_that_holds_or_lies_inside_the_data_folder_is_refused', () => {
    const { user, home } = layout();
    expect(wardErrorOf(() => assertOutsideWardData(home, 'the workspace', user))).toMatchObject({ code: 'invalid_grant', message: expect.stringContaining(`holds Ward's data folder ${home}`) });
    expect(wardErrorOf(() => assertOutsideWardData(home, 'the workspace', path.join(home, 'namespaces')))).toMatchObject({ message: expect.stringContaining("is inside Ward's data folder") });
    expect(() => assertOutsideWardData(home, 'the workspace', path.join(user, 'project'))).not.toThrow();
  });

  it('test_a_runs_permissions_refuse_the_data_folder_but_its_own_folders_even_under_a_broad_grant', async () => {
    const { user, home, workspace, configDir } = layout();
    const records: AuditRecord[] = [];
    // A stored grant made before the refusal existed: the protection still holds.
    const permissions = new RunPermissions({
      baseDir: workspace,
      rules: parsePermissionFlags([`--allow-read=${user}`], workspace),
      gate: null,
      grants: null,
      conversationId: 'c',
      agentId: 'a',
      agentName: 'helper',
      namespace: 'default',
      routes: [],
      prompter: noOnePrompter,
      audit: (record) => records.push(record),
      protect: wardDataProtection(home, [workspace, configDir]),
    });
    const read = (file_path: string) => permissions.approve({ toolName: 'Read', input: { file_path }, toolUseId: null });
    expect(await read(path.join(home, 'namespaces', 'abc', 'ward.db'))).toMatchObject({ behavior: 'deny', message: expect.stringContaining("Ward's own data folder") });
    expect(await read(path.join(home, 'namespaces', 'abc', 'model-profiles.json'))).toMatchObject({ behavior: 'deny' });
    expect(await read(path.join(workspace, 'notes.md'))).toMatchObject({ behavior: 'allow' });
    expect(await permissions.approve({ toolName: 'Grep', input: { pattern: 'sk-ant', path: user }, toolUseId: null })).toMatchObject({ behavior: 'deny', message: expect.stringContaining('the search covers') });
    expect(records.filter((record) => record.decision === 'deny')).toHaveLength(3);
  });

  it('test_ward_run_with_a_workspace_holding_the_data_folder_is_refused_before_anything_starts', async () => {
    const user = fs.realpathSync(tempDir('ward-user-'));
    const home = path.join(user, '.config', 'Ward');
    const result = await ward(['run', '--new', '--workspace', user, '--', 'list everything'], { env: { WARD_HOME: home, HOME: user } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the workspace ${user} holds Ward's data folder`);
    const grant = await ward(['permissions', 'grant', '--defaults', `--allow-read=${user}`], { env: { WARD_HOME: home, HOME: user } });
    expect(grant.code).toBe(2);
    expect(grant.stderr).toContain("holds Ward's data folder");
  });
});
