/** R8: a run whose outcome is unknown keeps the conversation until the person reconciles it. */
import { useState } from 'react';
import type { RunStatus } from '../state/timeline.js';

export type Outcome = 'succeeded' | 'failed' | 'stopped';

export function UncertainBanner({ run, onReconcile }: { run: RunStatus; onReconcile: (outcome: Outcome, note: string) => void }) {
  const [outcome, setOutcome] = useState<Outcome>('failed');
  const [note, setNote] = useState('');
  return (
    <section className="banner banner-warning" role="alert" data-testid="uncertain-banner">
      <strong>This run's outcome is unknown.</strong> {run.reason ?? 'Ward lost track of it.'} Check what its tools did, then record the outcome to
      free the conversation. Ward never resubmits it by itself.
      <form
        className="reconcile"
        onSubmit={(event) => {
          event.preventDefault();
          onReconcile(outcome, note.trim() || 'checked by the user');
        }}
      >
        <label>
          Outcome{' '}
          <select value={outcome} onChange={(event) => setOutcome(event.target.value as Outcome)}>
            <option value="failed">failed</option>
            <option value="succeeded">succeeded</option>
            <option value="stopped">stopped</option>
          </select>
        </label>
        <label>
          Note <input value={note} maxLength={500} onChange={(event) => setNote(event.target.value)} placeholder="what you checked" />
        </label>
        <button type="submit">Reconcile</button>
      </form>
    </section>
  );
}
