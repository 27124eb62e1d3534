/**
 * A warm session's hosts (issue 19, S3): the hosts a kept CLI's sandbox lets through are part of
 * what it was started with, so a net grant revoked between two turns is not reachable in the next
 * one, even though nothing else the CLI was started with changed.
 */
import { describe, expect, it } from 'vitest';
import { RunService } from '../../../main/app/runs/run-service.js';
import { GrantStore } from '../../../main/permissions/grant-store.js';
import { toolResultsSeen } from '../../fixtures/model-provider/provider.js';
import { site } from '../../support/sites.js';
import { bash } from '../../sandbox/steps.js';
import { closeHarnessesAfterEach, processGroupAlive, type Harness } from './harness.js';
import { answer, turn, warmHarness } from './warm.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('a warm session’s hosts', () => {
  it('test_a_net_grant_revoked_between_warm_turns_is_unreachable_in_the_next_turn_and_the_other_still_works', async () => {
    const kept = await site('kept');
    const revoked = await site('revoked');
    const curl = bash(`curl -sS -m 10 ${kept.url} ${revoked.url}`);
    harness = await warmHarness([curl, answer('Fetched both.'), curl, answer('Fetched again.')]);
    const store = harness.core.store(harness.ns);
    const agent = RunService.resolveAgent(store);
    const grants = new GrantStore(store.db);
    const grant = (kind: 'net' | 'run', value: string) => grants.add({ scope: 'agent', agentId: agent.agentId, effect: 'allow', kind, value, grantedBy: 'test' });
    grant('run', 'curl');
    grant('net', kept.hostPort);
    const revokedGrant = grant('net', revoked.hostPort);

    const first = await turn(harness, 'fetch both');
    expect(first.outcome.state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider)[0]!.text).toMatch(/hello from kept[\s\S]*hello from revoked/);
    expect([kept.hits(), revoked.hits()]).toEqual([1, 1]);

    grants.revoke(revokedGrant.id);
    const second = await turn(harness, 'fetch both again', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    // A new CLI whose proxy has only the kept host; no one can be asked, so the revoked one is denied.
    expect(second.pid).not.toBe(first.pid);
    expect(processGroupAlive(first.pid!)).toBe(false);
    const again = toolResultsSeen(harness.provider).at(-1)!.text;
    expect(again).toContain('hello from kept');
    expect(again).not.toContain('hello from revoked');
    expect([kept.hits(), revoked.hits()]).toEqual([2, 1]);
  });
});
