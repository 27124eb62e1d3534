/**
 * Asks the person about one tool use the grants were silent on (P3): allow once, allow for this
 * conversation, or deny, with the time left; when time runs out the broker denies.
 */
import { useEffect, useState } from 'react';
import type { ApprovalAnswer, PendingApprovalView } from '../../../preload/contract.js';

export function secondsLeft(expiresAt: string, now: number): number {
  const end = Date.parse(expiresAt);
  return Number.isFinite(end) ? Math.max(0, Math.ceil((end - now) / 1_000)) : 0;
}

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

export function ApprovalPrompt({
  approval,
  onAnswer,
  now: fixedNow,
  origin,
}: {
  approval: PendingApprovalView;
  onAnswer: (answer: ApprovalAnswer) => void;
  now?: number;
  origin?: ApprovalOrigin;
}) {
  const [sent, setSent] = useState(false);
  const left = useSecondsLeft(approval.expiresAt, fixedNow);
  const answer = (value: ApprovalAnswer) => {
    setSent(true);
    onAnswer(value);
  };
  const disabled = sent || left === 0;
  const offered = (choice: ApprovalAnswer) => approval.choices.includes(choice);
  return (
    <section className="approval" role="alertdialog" aria-labelledby={`approval-${approval.id}`} data-testid="approval">
      <h3 id={`approval-${approval.id}`}>
        Agent {approval.agent} {approval.summary}
      </h3>
      <div className="approval-summary">
        Tool <code>{approval.tool}</code> {approval.details}
      </div>
      <div className="muted">Asked because {approval.reason}</div>
      <OriginLink origin={origin} />
      <div className="approval-time" aria-live="polite">
        {left > 0 ? `${left} s left — no answer denies` : 'Timed out: denied'}
      </div>
      <div className="approval-actions">
        {offered('allow_once') && (
          <button type="button" disabled={disabled} onClick={() => answer('allow_once')}>
            Allow once
          </button>
        )}
        {offered('allow_conversation') && (
          <button type="button" disabled={disabled} onClick={() => answer('allow_conversation')}>
            Allow in this conversation
          </button>
        )}
        <button type="button" className="danger" disabled={disabled} onClick={() => answer('deny')} autoFocus>
          Deny
        </button>
      </div>
    </section>
  );
}
