import { describe, expect, it } from 'vitest';
import { buildWardApi, type PushedEvent } from '../../preload/contract.js';
import type { JournalEventView } from '../../common/views.js';
import { PushRouter } from '../../renderer/src/state/follow.js';

function transport() {
  const listeners = new Set<(event: PushedEvent) => void>();
  const api = buildWardApi(
    async () => ({ ok: true, value: null }),
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  );
  return { api, push: (event: PushedEvent) => listeners.forEach((listener) => listener(event)) };
}
const journal = (subscriptionId: string, seq: number): PushedEvent => ({ kind: 'journal', subscriptionId, events: [{ seq, runId: null, type: 'assistant_text', payload: { text: '' }, createdAt: '' }] });

describe('routing pushed events to subscriptions', () => {
  it('test_hands_over_pushes_that_arrived_before_the_subscription_id_was_known_in_order_then_live_ones', () => {
    const { api, push } = transport();
    const router = new PushRouter(api);
    push(journal('s1', 1));
    push(journal('s1', 2));
    const seen: number[] = [];
    router.route('s1', (event) => event.kind === 'journal' && seen.push(event.events[0]!.seq));
    push(journal('s1', 3));
    expect(seen).toEqual([1, 2, 3]);
    router.close();
  });

  it('test_drops_late_pushes_for_an_ended_subscription_instead_of_holding_them_so_a_new_one_is_not_crowded_out', () => {
    const { api, push } = transport();
    const router = new PushRouter(api);
    const stop = router.route('old', () => undefined);
    stop();
    for (let seq = 1; seq <= 20_000; seq++) push(journal('old', seq));
    push(journal('new', 1));
    const seen: number[] = [];
    router.route('new', (event) => event.kind === 'journal' && seen.push(event.events[0]!.seq));
    expect(seen).toEqual([1]);
    router.close();
  });

  it('test_parses_journal_events_where_they_enter_so_a_handler_gets_a_malformed_one_as_unreadable_and_the_rest_typed', () => {
    const { api, push } = transport();
    const router = new PushRouter(api);
    const seen: unknown[] = [];
    router.route('s1', (event) => event.kind === 'journal' && seen.push(...event.events));
    const arriving = [
      { seq: 1, runId: null, createdAt: '', type: 'run_finished', payload: { outcome: 'cancelled' } },
      { seq: 2, runId: null, createdAt: '', type: 'tool_call', payload: { toolUseId: 't1', tool: 'fetch', arguments: { token: 'sk-live-1' } } },
    ];
    push({ kind: 'journal', subscriptionId: 's1', events: arriving as unknown as JournalEventView[] });
    expect(seen).toEqual([
      { seq: 1, runId: null, createdAt: '', type: 'unreadable', payload: { storedType: 'run_finished', problem: expect.stringMatching(/state|reason|outcome/) } },
      { seq: 2, runId: null, createdAt: '', type: 'tool_call', payload: { toolUseId: 't1', tool: 'fetch', arguments: { token: '[redacted]' } } },
    ]);
    router.close();
  });
});
