/** Journal events for tests, typed as Ward's producers type them (common/events.ts): a wrong field is a compile error. */
import type { JournalEventView } from '../../common/views.js';
import { journalEvent, type JournalEventType, type PayloadOf } from '../../common/events.js';

/** A run_started payload as a turn writes it. */
export const RUN_STARTED: PayloadOf<'run_started'> = {
  requestId: 'req-1',
  agent: 'helper',
  agentVersion: 1,
  model: 'claude-sonnet-4-5',
  session: 'new',
  workspace: '/tmp/ward-test-workspace',
  sandboxed: true,
};

/** Makes feed views numbered from seq 1, as main pushes them to a window. */
export function viewFeed(runId: string | null = 'run-1') {
  let seq = 0;
  return <T extends JournalEventType>(type: T, payload: PayloadOf<T>, createdAt = '2026-03-01T12:00:00.000Z', run: string | null = runId): JournalEventView =>
    // A generic {type, payload} pair is one member of the union; TypeScript cannot see that by itself.
    ({ seq: ++seq, runId: run, createdAt, ...journalEvent(type, payload) }) as JournalEventView;
}
