/**
 * S3 as the proxy applies a run's net rules: a deny carved out of an allowed wildcard reaches the
 * proxy as a question Ward answers "deny" (the wildcard is not handed to the proxy to let through
 * by itself), and a host allowed at the prompt is allowed on that port only.
 */
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../main/permissions/audit.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { toolResultsSeen } from '../fixtures/model-provider/provider.js';
import { scriptedPerson } from '../support/people.js';
import { site } from '../support/sites.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { bash, DONE } from './steps.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

function netDecisions(h: Harness, conversationId: string): AuditRecord[] {
  return payloads<AuditRecord>(h.events(conversationId), 'permission_decision').filter((decision) => decision.via === 'sandbox');
}

describe('the proxy applies the run’s net rules (S3)', () => {
  it('test_a_host_denied_inside_an_allowed_wildcard_is_refused_by_the_proxy_after_wards_deny', async () => {
    const asker = scriptedPerson();
    harness = await startHarness([bash('curl -sS -m 10 https://admin.corp.example/'), DONE], { prompter: asker });
    const permissions = parsePermissionFlags(['--allow-run=curl', '--allow-net=*.corp.example', '--deny-net=admin.corp.example'], '/');
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'curl', permissions });
    expect((await handle.done).state).toBe('succeeded');

    // The proxy asked Ward (the wildcard was not in its list), and the deny rule answered without asking anyone.
    expect(netDecisions(harness, handle.conversationId)).toEqual([
      expect.objectContaining({ value: 'admin.corp.example:443', decision: 'deny', via: 'sandbox', answerer: expect.objectContaining({ by: 'rule' }) }),
    ]);
    expect(asker.questions).toEqual([]);
    expect(toolResultsSeen(harness.provider)[0]).toMatchObject({ isError: true, text: expect.stringContaining('403') });
  });

  it('test_a_single_label_host_the_proxy_could_not_list_is_refused_saying_why_without_asking_anyone', async () => {
    const asker = scriptedPerson('once');
    harness = await startHarness([bash('curl -sS -m 10 http://vm:8080/'), DONE], { prompter: asker });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'curl', permissions: parsePermissionFlags(['--allow-run=curl'], '/') });
    expect((await handle.done).state).toBe('succeeded');
    expect(asker.questions).toEqual([]);
    expect(netDecisions(harness, handle.conversationId)).toEqual([
      expect.objectContaining({ decision: 'deny', via: 'sandbox', answerer: { by: 'refused' }, reason: expect.stringContaining('the sandbox\'s proxy takes a host name only with a dot in it') }),
    ]);
  });

  it('test_a_host_allowed_once_at_the_prompt_is_allowed_on_that_port_and_another_port_is_asked_about', async () => {
    const asked = await site('asked port');
    const other = await site('other port');
    const asker = scriptedPerson('once', 'deny');
    harness = await startHarness([bash(`curl -sS -m 10 ${asked.url}`), bash(`curl -sS -m 10 ${other.url}`), DONE], { prompter: asker });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'curl', permissions: parsePermissionFlags(['--allow-run=curl'], '/') });
    expect((await handle.done).state).toBe('succeeded');

    const [first, second] = toolResultsSeen(harness.provider);
    expect(first!.text).toContain('hello from asked port');
    expect(second!.text).not.toContain('hello from other port');
    expect(asker.questions.map((question) => question.value)).toEqual([asked.hostPort, other.hostPort]);
    expect(asked.hits()).toBe(1);
    expect(other.hits()).toBe(0);
  });
});
