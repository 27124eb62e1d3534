/** Approvals in a window out of sight draw the person's attention: a notification each, a badge for all. */
import { describe, expect, it } from 'vitest';
import { watchApprovals, type AttentionNote } from '../../main/ipc/attention.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { ApprovalQueue } from '../../main/permissions/approval-queue.js';
import type { PromptQuestion } from '../../main/permissions/prompter.js';

const question = (namespace: string, value: string): PromptQuestion => ({
  tool: 'Read',
  kind: 'read',
  value,
  argumentsSummary: '{}',
  reason: 'no grant covers it',
  agent: 'helper',
  namespace,
  choices: ['once', 'deny'],
});

describe('attention for approvals (notifications and the icon badge)', () => {
  it('test_each_new_approval_is_notified_once_while_no_window_has_focus_and_the_badge_counts_every_namespace', async () => {
    const queue = new ApprovalQueue(60_000);
    const notes: AttentionNote[] = [];
    const badges: number[] = [];
    let focused = false;
    const stop = watchApprovals(queue, { focused: () => focused, notify: (note) => notes.push(note), setBadge: (count) => badges.push(count) }, () => undefined);

    const first = queue.ask(question('default', '/tmp/a\u202e.txt'), new AbortController().signal);
    void queue.ask(question('work', '/tmp/b.txt'), new AbortController().signal);
    expect(notes).toEqual([
      { title: 'Ward: approval needed', body: 'Agent helper wants to read /tmp/a\\u{202e}.txt' },
      { title: 'Ward: approval needed', body: 'Agent helper wants to read /tmp/b.txt' },
    ]);
    expect(badges).toEqual([1, 2]);

    // With Ward in front, the window shows the question itself: no notification, the badge still counts.
    focused = true;
    void queue.ask(question('default', '/tmp/c.txt'), new AbortController().signal);
    expect(notes).toHaveLength(2);
    const [pending] = queue.pending(parseNamespace('default'));
    queue.answer(parseNamespace('default'), pending!.id, 'deny');
    await expect(first).resolves.toBe('deny');
    expect(badges).toEqual([1, 2, 3, 2]);
    stop();
  });
});
