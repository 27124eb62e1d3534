/**
 * Asks the person about one tool use the grants were silent on (P3): allow once, in this
 * conversation, always for this agent, or deny, with the time left; when time runs out the
 * broker denies. It never takes focus (the person may be typing elsewhere) and ignores input for
 * ARM_MS after it appears, so a keystroke or click meant for something else cannot answer it.
 * Escape denies, but only while focus is inside it.
 */
import { ShieldQuestion } from 'lucide-react';
import { useEffect, useState, type KeyboardEvent } from 'react';
import type { ApprovalAnswer, PendingApprovalView } from '../../../common/views.js';

/** How long a new approval ignores input. */
export const ARM_MS = 750;

export function secondsLeft(expiresAt: string, now: number): number {
  const end = Date.parse(expiresAt);
  return Number.isFinite(end) ? Math.max(0, Math.ceil((end - now) / 1_000)) : 0;
}

const LABELS: Readonly<Record<ApprovalAnswer, string>> = {
  allow_once: 'Allow once',
  allow_conversation: 'Allow in this conversation',
  allow_agent: 'Always allow for this agent',
  deny: 'Deny',
};

/** Seconds left until `expiresAt`, ticking each second (fixed at `fixedNow` in tests). */
export function useSecondsLeft(expiresAt: string, fixedNow: number | undefined): number {
  const [now, setNow] = useState(() => fixedNow ?? Date.now());
  useEffect(() => {
    if (fixedNow !== undefined) return;
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [fixedNow]);
  return secondsLeft(expiresAt, now);
}

/** Shown with a question from a chat other than the one open: which chat asks, and a way there. */
export interface ApprovalOrigin {
  readonly title: string;
  readonly onOpen: () => void;
}

export function OriginLink({ origin }: { origin: ApprovalOrigin | undefined }) {
  if (origin === undefined) return null;
  return (
    <div className="approval-origin">
      In the chat “{origin.title}”{' '}
      <button type="button" className="link-button" onClick={origin.onOpen}>
        Open it
      </button>
    </div>
  );
}

export function ApprovalPrompt({ approval, onAnswer, now: fixedNow }: { approval: PendingApprovalView; onAnswer: (answer: ApprovalAnswer) => void; now?: number }) {
  const [sent, setSent] = useState(false);
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setArmed(true), ARM_MS);
    return () => clearTimeout(timer);
  }, []);
  const left = useSecondsLeft(approval.expiresAt, fixedNow);
  const live = !sent && left > 0;
  const answer = (value: ApprovalAnswer) => {
    if (!armed || !live) return;
    setSent(true);
    onAnswer(value);
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !approval.choices.includes('deny')) return;
    event.preventDefault();
    event.stopPropagation();
    answer('deny');
  };
  return (
    <section className="approval" role="group" aria-labelledby={`approval-${approval.id}`} data-testid="approval" data-armed={armed} onKeyDown={onKeyDown}>
      <h2 id={`approval-${approval.id}`}>
        <ShieldQuestion size={16} aria-hidden className="approval-icon" />
        Agent {approval.agent} {approval.summary}
      </h2>
      <div className="approval-summary">
        Tool <code>{approval.tool}</code> {approval.details}
      </div>
      <div className="muted">Asked because {approval.reason}</div>
      <div className="approval-time">{left > 0 ? `${left} s left — no answer denies` : 'Timed out: denied'}</div>
      <div className="approval-actions">
        {approval.choices.map((choice) => (
          <button
            key={choice}
            type="button"
            className={choice === 'deny' ? 'danger' : choice === 'allow_once' ? 'primary' : undefined}
            disabled={!live}
            aria-disabled={!armed || undefined}
            onClick={() => answer(choice)}
          >
            {LABELS[choice]}
          </button>
        ))}
      </div>
    </section>
  );
}
