/**
 * Rewinding the conversation from the desktop (issue 26) in real Chromium: a prompt offers
 * "Restore the conversation to here", the confirmation says what happens, the rewind goes through
 * the real ConversationRewind (journaled), and the messages rewound stay, marked "Rewound". The
 * rewind's marker offers "Undo this rewind" (from the keyboard too), which brings them back. The
 * screens pass the axe gate.
 */
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { auditScreen } from './harness/axe.js';
import { seedConversation, timelineOf, useUiSuite } from './harness/harness.js';

const suite = useUiSuite();

describe('rewinding the conversation in real Chromium', () => {
  it('test_restore_the_conversation_to_here_confirms_what_happens_journals_the_rewind_and_marks_the_messages_rewound', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'Rewind me');
    const runId = '00000000-0000-4000-8000-000000000126';
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      [journalEvent('run_started', RUN_STARTED), journalEvent('user_prompt', { text: 'first question' }), journalEvent('assistant_text', { text: 'first answer' }), journalEvent('run_finished', { state: 'succeeded', reason: null })].map((event) => ({ ...event, runId })),
    );
    const page = await harness.open();
    await page.getByRole('button', { name: /Rewind me/ }).click();
    await timelineOf(page).getByText('first answer').waitFor();
    await expect(timelineOf(page).getByText('Rewound').count()).resolves.toBe(0);

    await timelineOf(page).getByRole('button', { name: 'Restore the conversation to here' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Restore the conversation to here?' });
    await expect(dialog.textContent()).resolves.toContain('They stay in the journal, marked as rewound, and nothing is deleted.');
    await expect(dialog.textContent()).resolves.not.toContain('.git/');
    await dialog.getByRole('button', { name: 'Restore the conversation' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const messages = timelineOf(page).getByTestId('message');
    await expect.poll(() => timelineOf(page).locator('.message-rewound').count()).toBe(2);
    await expect(messages.nth(0).textContent()).resolves.toContain('Rewound');
    await timelineOf(page).getByText(/conversation rewound to before event #2/).waitFor();
    // A rewound message offers no rewind of its own.
    await expect(timelineOf(page).getByRole('button', { name: 'Restore the conversation to here' }).count()).resolves.toBe(0);
    const events = [...harness.core.store(harness.ns).journal.read(conversation.id, 0)];
    expect(events.at(-1)!.type).toBe('conversation_rewound');
    expect(events.at(-1)!.payload).toMatchObject({ toSeq: 2, rewound: [{ from: 1, to: 4 }], undid: null, after: { started: false, fork: null } });
    await auditScreen(page, 'chat-conversation-rewound');

    // Undo from the keyboard: the marker's button is reached by Tab, the confirmation says what happens.
    const undo = timelineOf(page).getByRole('button', { name: 'Undo this rewind' });
    await undo.focus();
    await expect(undo.evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('alertdialog', { name: 'Undo this rewind?' });
    await expect(confirm.textContent()).resolves.toContain('The agent remembers the messages this rewind took back again');
    await auditScreen(page, 'chat-undo-conversation-rewind');
    const confirmButton = confirm.getByRole('button', { name: 'Undo the rewind' });
    await confirmButton.focus();
    await page.keyboard.press('Enter');
    await confirm.waitFor({ state: 'hidden' });

    await expect.poll(() => timelineOf(page).locator('.message-rewound').count()).toBe(0);
    await timelineOf(page).getByText(/conversation rewind #5 undone/).waitFor();
    const undone = [...harness.core.store(harness.ns).journal.read(conversation.id, 0)].at(-1)!;
    expect(undone.type).toBe('conversation_rewound');
    // The same as `ward rewind C --to 5 --conversation`: the session before the rewind comes back.
    expect(undone.payload).toMatchObject({ toSeq: 5, undid: 5, rewound: [{ from: 5, to: 5 }] });
    expect((undone.payload as { after: unknown }).after).toEqual((events.at(-1)!.payload as { before: unknown }).before);
    // The first marker is rewound now; the undo's own marker can be undone in turn.
    await expect(timelineOf(page).getByRole('button', { name: 'Undo this rewind' }).count()).resolves.toBe(1);
    await expect(timelineOf(page).getByRole('button', { name: 'Restore the conversation to here' }).count()).resolves.toBe(1);
  });
});
