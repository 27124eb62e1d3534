/** A finished run whose file changes the real change tracker recorded, for the diff viewer's tests and bench. */
import path from 'node:path';
import { journalEvent } from '../../../common/events.js';
import { ChangeStore, DEFAULT_TRACKING_LIMITS, snapshotAfter, snapshotBefore } from '../../../main/changes/tracker.js';
import { namespaceDir } from '../../../main/namespaces/namespace.js';
import { RUN_STARTED } from '../../support/events.js';
import { seedConversation, type UiHarness } from './harness.js';

/** A chat titled `title` with one finished run that did `change` to `dir` (`dir/.env` under --deny-read). */
export async function seedChangedRun(harness: UiHarness, title: string, dir: string, change: () => void) {
  const conversation = seedConversation(harness, title);
  const store = harness.core.store(harness.ns);
  const changes = new ChangeStore(path.join(namespaceDir(harness.home, harness.ns), 'changes'));
  const { run } = store.runs.admit(conversation.id, `req-${title}`, 'fingerprint');
  store.runs.transition(run.id, 'running');
  const before = await snapshotBefore(changes, conversation.id, [dir], [path.join(dir, '.env')], DEFAULT_TRACKING_LIMITS);
  change();
  const after = await snapshotAfter(changes, before, DEFAULT_TRACKING_LIMITS);
  store.journal.appendMany(
    conversation.id,
    [
      journalEvent('run_started', RUN_STARTED),
      journalEvent('user_prompt', { text: 'tidy the project' }),
      journalEvent('assistant_text', { text: 'Done: I tidied the project.' }),
      journalEvent('files_changed', { changes: after.changes, files: after.files, scanMs: 1 }),
      journalEvent('run_finished', { state: 'succeeded', reason: null }),
    ].map((event) => ({ ...event, runId: run.id })),
  );
  store.runs.transition(run.id, 'succeeded');
  return conversation;
}
