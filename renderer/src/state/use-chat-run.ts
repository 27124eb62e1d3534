/**
 * The run a chat shows and what the person does to it: Send, Stop (Escape from anywhere in the
 * window; a dialog or an approval with focus takes its own Escape first) and settling an
 * uncertain run. Our own Send/Stop shows at once, until the journal or the store has caught up.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ConversationView } from '../../../common/views.js';
import { errorText, unwrap } from '../api.js';
import type { Outcome } from '../components/UncertainBanner.js';
import { mergeRunState, type RunStatus } from './timeline.js';

export interface ChatRunInput {
  readonly api: WardApi;
  readonly namespace: string;
  readonly conversationId: string;
  /** The run as the journal tells it. */
  readonly journalRun: RunStatus | null;
  readonly conversation: ConversationView | null;
  /** Re-reads the conversation from the store. */
  readonly refresh: () => void;
  /** An action failed (null: the next one starts clean). */
  readonly onError: (error: string | null) => void;
  readonly onRunChange?: ((state: string | null) => void) | undefined;
  readonly announce?: ((text: string) => void) | undefined;
}

function useAnnounceEnd(runState: string | null, announce: ChatRunInput['announce']): void {
  const previousState = useRef(runState);
  useEffect(() => {
    const before = previousState.current;
    previousState.current = runState;
    if (before !== 'running' && before !== 'admitted') return;
    if (runState === 'succeeded') announce?.('Answer finished');
    else if (runState === 'failed') announce?.('The run failed');
    else if (runState === 'stopped') announce?.('Stopped');
  }, [runState, announce]);
}

function useEscapeStops(active: boolean, stop: () => void): void {
  useEffect(() => {
    if (!active) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('dialog[open]') !== null) return;
      if (event.target instanceof HTMLInputElement && event.target.type === 'search') return;
      event.preventDefault();
      stop();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [active, stop]);
}

export function useChatRun({ api, namespace, conversationId, journalRun, conversation, refresh, onError, onRunChange, announce }: ChatRunInput) {
  const [localRun, setLocalRun] = useState<RunStatus | null>(null);
  let run = mergeRunState(journalRun, conversation?.activeRun ?? null);
  if (localRun !== null) {
    if (run === null || run.id !== localRun.id) run = localRun;
    else if (localRun.state === 'stopping' && (run.state === 'running' || run.state === 'admitted')) run = localRun;
  }
  const runState = run?.state ?? null;
  useEffect(() => onRunChange?.(runState), [runState, onRunChange]);
  useAnnounceEnd(runState, announce);

  const send = async (prompt: string): Promise<boolean> => {
    onError(null);
    try {
      const started = await unwrap(api.runs.send({ namespace, conversationId, requestId: crypto.randomUUID(), prompt }));
      setLocalRun({ id: started.runId, state: 'running', reason: null });
      return true;
    } catch (failure) {
      onError(errorText(failure));
      return false;
    }
  };
  // While the person writes, main starts the chat's CLI, so the message is answered by one already running.
  // Only a head start: whatever it meets (busy, off, a refusal), the send reports for itself.
  const prepare = useCallback(() => void api.runs.prepare({ namespace, conversationId }).catch(() => undefined), [api, namespace, conversationId]);
  const stop = useCallback(() => {
    if (run === null) return;
    const runId = run.id;
    setLocalRun({ id: runId, state: 'stopping', reason: null });
    onError(null);
    unwrap(api.runs.stop({ namespace, runId }))
      .then(() => refresh())
      .catch((failure: unknown) => onError(errorText(failure)));
  }, [api, namespace, run, refresh, onError]);
  useEscapeStops(runState === 'running' || runState === 'admitted', stop);
  const reconcile = (outcome: Outcome, note: string) => {
    if (run === null) return;
    unwrap(api.runs.reconcile({ namespace, runId: run.id, outcome, note }))
      .then(() => {
        setLocalRun(null);
        refresh();
      })
      .catch((failure: unknown) => onError(errorText(failure)));
  };
  return { run, runState, send, prepare, stop, reconcile };
}
