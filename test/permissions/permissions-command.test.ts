import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalAuditSink } from '../../main/permissions/audit.js';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { noOnePrompter } from '../../main/permissions/prompter.js';
import { RunPermissions } from '../../main/permissions/run-permissions.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { wardInProcess as ward } from '../support/ward-in-process.js';

function seeded() {
  const home = tempDir();
  const { core, store, conversation } = seedConversation(home);
  return { home, core, store, conversation, env: { WARD_HOME: home } };
}

describe('ward permissions', () => {
  it('test_shows_grants_and_decisions_of_a_conversation', async () => {
    const { core, store, conversation, env } = seeded();
    const grants = new GrantStore(store.db);
    grants.add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'mcp', value: 'github/list_issues', grantedBy: 'prompt:conversation' });
    const base = fs.realpathSync(tempDir());
    const permissions = new RunPermissions({
      baseDir: base,
      rules: [],
      gate: null,
      grants,
      conversationId: conversation.id,
      agentId: conversation.agentId,
      agentName: 'helper',
      namespace: 'default',
      routes: [],
      prompter: noOnePrompter,
      audit: journalAuditSink(store.journal, conversation.id, null),
    });
    await permissions.approve({ toolName: 'Read', input: { file_path: '/etc/hostname' }, toolUseId: null });
    core.close();

    const text = await ward(['permissions', '--conversation', conversation.id.slice(0, 8)], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`grants held by conversation ${conversation.id} (1):`);
    expect(text.stdout).toMatch(/allow mcp {3}github\/list_issues {2}\(conversation/);
    expect(text.stdout).toMatch(/#1 \d\d:\d\d:\d\d DENY {2}Read read \/etc\/hostname {2}by no_one/);

    const json = await ward(['permissions', '--conversation', conversation.id, '--json'], env);
    const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.type)).toEqual(['grant', 'decision']);
    expect(lines[1]).toMatchObject({ seq: 1, decision: 'deny', tool: 'Read', value: '/etc/hostname' });
  });

  it('test_revoke_takes_a_grant_back_and_the_listing_shows_it_revoked', async () => {
    const { core, store, conversation, env } = seeded();
    const grant = new GrantStore(store.db).add({ scope: 'conversation', conversationId: conversation.id, effect: 'allow', kind: 'run', value: 'git', grantedBy: 'cli' });
    core.close();
    const revoked = await ward(['permissions', 'revoke', grant.id.slice(0, 8)], env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^revoked [0-9a-f]{8} {2}allow run {3}git/);
    expect((await ward(['permissions'], env)).stdout).toBe('no active grants in namespace default; add some with "ward --namespace default permissions grant"\n');
    expect((await ward(['permissions', '--all'], env)).stdout).toContain('[revoked ');
  });

  it('test_revoke_of_an_unknown_grant_exits_not_found', async () => {
    const { core, env } = seeded();
    core.close();
    const result = await ward(['permissions', 'revoke', 'deadbeef'], env);
    expect(result).toMatchObject({ code: 5, stderr: 'ward permissions: no grant deadbeef\n' });
  });

  it('test_grant_adds_conversation_grants_from_flags', async () => {
    const { core, conversation, env } = seeded();
    core.close();
    const result = await ward(['permissions', 'grant', '--conversation', conversation.id, '--allow-net=api.github.com', '--deny-run=rm'], env);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(2);
    expect((await ward(['permissions', '--conversation', conversation.id], env)).stdout).toContain('api.github.com');
  });

  it('test_grant_refuses_allow_all_and_a_policy_cap', async () => {
    const { core, conversation, env } = seeded();
    core.close();
    expect(await ward(['permissions', 'grant', '--conversation', conversation.id, '-A'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('never grants everything') });
    const policy = path.join(tempDir(), 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ version: 1, reason: 'Example IT', forbid: ['net'] }));
    const refused = await ward(['permissions', 'grant', '--conversation', conversation.id, '--allow-net=api.github.com'], { ...env, WARD_POLICY: policy });
    expect(refused).toMatchObject({ code: 2, stderr: 'ward permissions: net grants are forbidden (net api.github.com): refused by Example IT\n' });
    fs.writeFileSync(policy, '{ not json');
    expect((await ward(['permissions', 'grant', '--conversation', conversation.id, '--allow-net=x.com'], { ...env, WARD_POLICY: policy })).code).toBe(7);
  });

  it('test_tools_pinned_in_the_agent_version_are_listed_as_held', async () => {
    const { core, store, env } = seeded();
    const agent = store.agents.publish('tooly', {
      instructions: 'x',
      upstreams: { github: { type: 'stdio', command: '/usr/bin/true' } },
      tools: [{ upstream: 'github', name: 'list_issues', exposedName: 'list_issues', description: '', inputSchema: { type: 'object' }, schemaHash: 'a'.repeat(64) }],
    });
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'tools' });
    core.close();
    const result = await ward(['permissions', '--conversation', conversation.id], env);
    expect(result.stdout).toContain(`grants held by conversation ${conversation.id} (1):`);
    expect(result.stdout).toContain('pinned    allow mcp   github/list_issues  (pinned in agent tooly@1)');
  });

  it('test_namespace_defaults_apply_to_every_conversation_and_agent_grants_need_a_known_agent', async () => {
    const { core, store, conversation, env } = seeded();
    const other = store.conversations.create({ agentId: conversation.agentId, agentVersion: conversation.agentVersion, title: 'other' });
    core.close();
    expect((await ward(['permissions', 'grant', '--defaults', '--allow-env=HOME'], env)).code).toBe(0);
    for (const id of [conversation.id, other.id]) expect((await ward(['permissions', '--conversation', id], env)).stdout).toMatch(/allow env {3}HOME {2}\(namespace/);
    expect(await ward(['permissions', 'grant', '--agent', 'nobody', '--allow-env=HOME'], env)).toMatchObject({ code: 5, stderr: 'ward permissions: no agent named nobody\n' });
    expect((await ward(['permissions', 'grant', '--defaults', '--agent', 'helper', '--allow-env=HOME'], env)).code).toBe(2);
  });
});
