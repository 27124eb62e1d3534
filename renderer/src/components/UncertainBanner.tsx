/**
 * R8: a run whose outcome is unknown keeps the conversation until the person records what it
 * did. Nothing is chosen for them: they check what its tools did, then pick the outcome.
 */
import { TriangleAlert } from 'lucide-react';
import { useId, useState } from 'react';
import { escapeForWindow } from '../../../common/display.js';
import type { RunStatus } from '../state/timeline.js';

export type Outcome = 'succeeded' | 'failed' | 'stopped';

const OUTCOMES: readonly { value: Outcome; label: string }[] = [
  { value: 'succeeded', label: 'It succeeded: its work is done' },
  { value: 'failed', label: 'It failed: its work is not done' },
  { value: 'stopped', label: 'It stopped part way' },
];

/** A reason as a sentence of its own: capitalized, ending in a full stop. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  const capital = `${trimmed[0]!.toUpperCase()}${trimmed.slice(1)}`;
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

export function UncertainBanner({ run, onReconcile }: { run: RunStatus; onReconcile: (outcome: Outcome, note: string) => void }) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [note, setNote] = useState('');
  const name = useId();
  return (
    <section className="banner banner-warning uncertain" role="region" aria-label="Unfinished run" data-testid="uncertain-banner">
      <TriangleAlert size={18} aria-hidden className="banner-icon" />
      <div>
        <p>
          <strong>The last run did not finish normally.</strong> {sentence(escapeForWindow(run.reason ?? 'Ward lost track of it'))} Check what its tools did,
          then record what happened to free the chat. Ward never runs it again by itself.
        </p>
        <form
          className="reconcile"
          onSubmit={(event) => {
            event.preventDefault();
            if (outcome !== null) onReconcile(outcome, note.trim() || 'checked by the user');
          }}
        >
          <fieldset className="choice-group">
            <legend>What happened?</legend>
            {OUTCOMES.map((choice) => (
              <label key={choice.value} className="choice">
                <input type="radio" name={name} value={choice.value} checked={outcome === choice.value} onChange={() => setOutcome(choice.value)} /> {choice.label}
              </label>
            ))}
          </fieldset>
          <label className="field-inline">
            Note <input value={note} maxLength={500} onChange={(event) => setNote(event.target.value)} placeholder="what you checked (optional)" />
          </label>
          <button type="submit" className="primary" disabled={outcome === null}>
            Reconcile
          </button>
        </form>
      </div>
    </section>
  );
}
