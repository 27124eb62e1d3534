/**
 * How a turn ends: the outcome its CLI earned (R5: success only from a terminal success result;
 * R8: calls in flight make it uncertain), then the run's final state as the store allows it.
 */
import { describeError } from '../../base/errors.js';
import type { CliExit } from '../../runner/child.js';
import type { ResultMessage } from '../../runner/stream-parser.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import type { RunState } from '../../store/runs.js';
import { firstLine } from './event-bounds.js';

export interface Outcome {
  readonly state: RunState;
  readonly reason: string | null;
}

/** A stop the person asked for, and why. */
export interface StopRequest {
  readonly requested: boolean;
  readonly reason: string;
}

/** What the turn knows when its CLI is gone (or kept warm past its result). */
export interface TurnEnd {
  /** The CLI's exit; null when a warm CLI ended the turn at its result and lives on. */
  readonly exit: CliExit | null;
  readonly stop: StopRequest;
  readonly abortReason: string | null;
  readonly result: ResultMessage | null;
  readonly callsInFlight: number;
  readonly lastDiagnostic: string | null;
  readonly redact: (text: string) => string;
}

const NO_CONVERSATION = 'No conversation found';

/** R5: success only from a terminal result with subtype "success" and is_error false; R8 for calls in flight. */
export function decideOutcome(end: TurnEnd): Outcome {
  if (end.stop.requested) return { state: 'stopped', reason: end.stop.reason };
  if (end.abortReason !== null) return { state: 'failed', reason: end.abortReason };
  const result = end.result;
  if (result !== null) {
    if (result.subtype === 'success' && !result.isError) return { state: 'succeeded', reason: null };
    if (result.errors.some((error) => error.includes(NO_CONVERSATION))) {
      return {
        state: 'failed',
        reason: "the CLI's native transcript for this conversation is missing (No conversation found); Ward never starts a new conversation silently: start a new conversation (New chat in the desktop, ward run --new in a terminal)",
      };
    }
    // The CLI's errors and text can quote the provider, which may echo the key.
    const detail = end.redact(result.errors.length > 0 ? result.errors.join('; ') : (result.text ?? 'no detail'));
    const what = result.subtype === 'success' ? 'the CLI ended the turn with an error' : `the CLI reported ${result.subtype}`;
    return { state: 'failed', reason: `${what}: ${detail}`.slice(0, 1000) };
  }
  const exitNote = describeExit(end);
  if (end.callsInFlight > 0) return { state: 'uncertain', reason: `${exitNote}; ${end.callsInFlight} tool call(s) were in flight and their effect is unknown` };
  return { state: 'failed', reason: exitNote.slice(0, 1000) };
}

function describeExit({ exit, redact, lastDiagnostic }: TurnEnd): string {
  if (exit === null) return 'the CLI ended the turn without a result';
  if (exit.spawnError !== null) return `the CLI could not be started: ${exit.spawnError}`;
  const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
  const said = firstLine(redact(exit.stderrTail)) ?? lastDiagnostic;
  return `the CLI ${how} without a result${said === null ? '' : `: ${said}`}`;
}

/** Moves the run to its final state (it is what admission reads): a stop wins over what the CLI managed, and a turn that never ran cannot succeed. */
export function settleRun(store: NamespaceStore, runId: string, wanted: Outcome, stop: StopRequest): Outcome {
  let final = wanted;
  const current = store.runs.get(runId).state;
  if (current === 'stopping' && (final.state === 'succeeded' || final.state === 'failed') && stop.requested) final = { state: 'stopped', reason: stop.reason };
  if (current === 'admitted' && final.state === 'stopped') store.runs.transition(runId, 'stopping', stop.reason);
  if (current === 'admitted' && final.state === 'succeeded') final = { state: 'failed', reason: final.reason };
  try {
    store.runs.transition(runId, final.state, final.reason);
  } catch (error) {
    final = { state: store.runs.get(runId).state, reason: describeError(error) };
  }
  return final;
}
