/**
 * What a turn asks the person, journaled: each permission decision (P1–P4) and each server's
 * request for input (elicitation). The value, reason and summary quote what the model or the
 * server sent, which may hold a secret of this turn: all of it is redacted first (C3).
 */
import { PERMISSION_DECISION_EVENT, type AuditSink } from '../../permissions/audit.js';
import { RunElicitations } from '../../permissions/elicitations.js';
import { DEFAULT_PROMPT_TIMEOUT_MS } from '../../permissions/run-permissions.js';
import type { Namespace } from '../../namespaces/namespace.js';
import type { Prompter } from '../../permissions/prompter.js';
import { truncateText } from './event-bounds.js';
import type { TurnDeps } from './turn-deps.js';
import type { TurnJournal } from './turn-journal.js';

/** Journals each permission decision of the turn. */
export function permissionAudit(journal: TurnJournal): AuditSink {
  const redact = (text: string) => journal.redact(text);
  return (record) =>
    journal.emit(PERMISSION_DECISION_EVENT, {
      ...record,
      value: record.value === null ? null : redact(record.value),
      argumentsSummary: redact(record.argumentsSummary),
      reason: redact(record.reason),
    });
}

export interface ElicitationTurn {
  readonly namespace: Namespace;
  readonly conversationId: string;
  readonly runId: string;
  readonly agentName: string;
  /** False once the turn is stopping or done: a new request is refused. */
  accepting(): boolean;
  /** A sensitive answer the broker must also redact from what servers send back. */
  keepSecret(value: string): void;
  /** Who answers, if not the app's prompter. */
  readonly prompter?: Prompter;
}

/** Servers' requests for input during this turn's calls: asked like permission questions, journaled, never shown to the model. */
export function turnElicitations(deps: TurnDeps, turn: ElicitationTurn, journal: TurnJournal): RunElicitations {
  const redact = (text: string) => journal.redact(text);
  return new RunElicitations({
    prompter: turn.prompter ?? deps.prompter,
    timeoutMs: deps.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS,
    agentName: turn.agentName,
    namespace: turn.namespace.name,
    conversationId: turn.conversationId,
    runId: turn.runId,
    accepting: () => turn.accepting(),
    keepSecret: (value) => {
      journal.addSecret(value);
      turn.keepSecret(value);
    },
    journal: {
      requested: ({ elicitationId, server, request }) =>
        journal.emit('elicitation_requested', {
          elicitationId,
          server,
          mode: request.mode,
          message: truncateText(redact(request.message)),
          fields: request.mode === 'form' ? request.fields.map(({ name, kind, required, sensitive }) => ({ name, kind, required, sensitive })) : [],
          urlOrigin: request.mode === 'url' ? request.url.origin : null,
          continuesCall: request.continuesCall === true,
        }),
      answered: ({ content, ...answer }) =>
        journal.emit('elicitation_answered', {
          ...answer,
          content: content === null ? null : Object.fromEntries(Object.entries(content).map(([name, value]) => [name, typeof value === 'string' ? redact(value) : value])),
        }),
      refused: ({ server, reason }) => journal.emit('elicitation_refused', { server, reason: redact(reason).slice(0, 500) }),
    },
  });
}
