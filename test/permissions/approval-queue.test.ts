import { describe, expect, it } from 'vitest';
import { isWardError } from '../../main/base/errors.js';
import { ApprovalQueue } from '../../main/permissions/approval-queue.js';
import { escapeOneLine } from '../../common/display.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import type { PromptQuestion } from '../../main/permissions/prompter.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const question = (overrides: Partial<PromptQuestion> = {}): PromptQuestion => ({
  tool: 'Read',
  kind: 'read',
  value: '/home/me/secret.txt',
  argumentsSummary: '{"file_path":"/home/me/secret.txt"}',
  reason: 'no grant covers read /home/me/secret.txt',
  agent: 'helper',
  namespace: 'default',
  choices: ['once', 'conversation', 'always', 'deny'],
  ...overrides,
});
const ns = parseNamespace('default');

describe('the desktop approval queue (P3)', () => {
  it('test_shows_the_question_with_the_choices_the_window_offers_and_the_deadline_and_settles_with_the_answer', async () => {
    const queue = new ApprovalQueue(120_000, () => NOW);
    const changes: string[] = [];
    queue.onChange((name) => changes.push(name));
    const answer = queue.ask(question({ conversationId: 'c1', runId: 'r1' }), new AbortController().signal);
    const [pending] = queue.pending(ns);
    expect(pending).toMatchObject({
      conversationId: 'c1',
      runId: 'r1',
      agent: 'helper',
      tool: 'Read',
      summary: 'wants to read /home/me/secret.txt',
      choices: ['allow_once', 'allow_conversation', 'allow_agent', 'deny'],
      expiresAt: '2026-03-01T12:02:00.000Z',
    });
    queue.answer(ns, pending!.id, 'allow_conversation');
    await expect(answer).resolves.toBe('conversation');
    expect(queue.pending(ns)).toEqual([]);
    expect(changes).toEqual(['default', 'default']);
  });

  it('test_shows_the_deadline_the_run_set_on_its_question_the_one_the_run_denies_at', () => {
    const queue = new ApprovalQueue(120_000, () => NOW);
    void queue.ask(question({ expiresAt: NOW + 45_000 }), new AbortController().signal);
    expect(queue.pending(ns)[0]).toMatchObject({ expiresAt: '2026-03-01T12:00:45.000Z' });
  });

  it('test_places_each_question_in_the_conversation_and_run_that_asked_even_for_the_same_agent_twice_an_unplaced_one_is_window_wide', () => {
    const queue = new ApprovalQueue(120_000, () => NOW);
    void queue.ask(question({ conversationId: 'conv-a', runId: 'run-a' }), new AbortController().signal);
    void queue.ask(question({ conversationId: 'conv-b', runId: 'run-b' }), new AbortController().signal);
    void queue.ask(question(), new AbortController().signal);
    expect(queue.pending(ns).map((view) => [view.agent, view.conversationId, view.runId])).toEqual([
      ['helper', 'conv-a', 'run-a'],
      ['helper', 'conv-b', 'run-b'],
      ['helper', null, null],
    ]);
  });

  it('test_a_withdrawn_question_the_run_timed_out_or_ended_is_a_deny_and_leaves_the_list', async () => {
    const queue = new ApprovalQueue(120_000);
    const controller = new AbortController();
    const answer = queue.ask(question(), controller.signal);
    expect(queue.pending(ns)).toHaveLength(1);
    controller.abort();
    await expect(answer).resolves.toBe('deny');
    expect(queue.pending(ns)).toEqual([]);
  });

  it('test_refuses_an_answer_the_question_does_not_offer_one_for_another_namespace_and_a_second_answer', async () => {
    const queue = new ApprovalQueue(120_000);
    const answer = queue.ask(question({ choices: ['once', 'deny'] }), new AbortController().signal);
    const [pending] = queue.pending(ns);
    expect(pending!.choices).toEqual(['allow_once', 'deny']);
    const attempt = (fn: () => void) => {
      try {
        fn();
        return null;
      } catch (error) {
        return isWardError(error) ? `${error.code}: ${error.message}` : String(error);
      }
    };
    expect(attempt(() => queue.answer(ns, pending!.id, 'allow_conversation'))).toBe('usage: this approval can be answered allow_once, deny, not allow_conversation');
    expect(attempt(() => queue.answer(parseNamespace('other'), pending!.id, 'allow_once'))).toMatch(/^not_found: no pending approval/);
    queue.answer(ns, pending!.id, 'deny');
    await expect(answer).resolves.toBe('deny');
    expect(attempt(() => queue.answer(ns, pending!.id, 'allow_once'))).toMatch(/^not_found: .*timed out, which denied it/);
  });

  it('test_escapes_control_bidi_and_zero_width_characters_from_the_model_and_bounds_the_length_p1', () => {
    expect(escapeOneLine('evil\u202Etxt.exe\u200B\nnext', 100)).toBe('evil\\u{202e}txt.exe\\u{200b}\\u{a}next');
    expect(escapeOneLine('x'.repeat(500), 50)).toHaveLength(50);
  });
});
