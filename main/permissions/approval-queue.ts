/**
 * The desktop's prompter (P3): a permission question becomes a pending approval the window
 * shows, a server's request for input a pending elicitation beside it; the person's answer (or
 * the run's timeout, which aborts the question) settles it. Everything shown is escaped and
 * bounded here, in main, before it reaches the page (P1).
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, ElicitationAction, ElicitationFieldView, ElicitationFieldValue, PendingApprovalView, PendingElicitationView } from '../../common/views.js';
import { escapeOneLine, showArguments } from '../../common/display.js';
import { WardError } from '../base/errors.js';
import type { Namespace } from '../namespaces/namespace.js';
import { completeContent, ElicitationRefusal, type ElicitationField, type ElicitationReply } from '../upstreams/elicitation.js';
import { PROMPT_VERB, type ElicitationQuestion, type PromptAnswer, type PromptQuestion, type Prompter } from './prompter.js';

const TO_PROMPT: Readonly<Record<ApprovalAnswer, PromptAnswer>> = { allow_once: 'once', allow_conversation: 'conversation', allow_agent: 'always', deny: 'deny' };
const FROM_PROMPT: Readonly<Record<PromptAnswer, ApprovalAnswer>> = { once: 'allow_once', conversation: 'allow_conversation', always: 'allow_agent', deny: 'deny' };

interface Entry {
  readonly namespace: string;
  readonly view: PendingApprovalView;
  readonly settle: (answer: PromptAnswer) => void;
}

interface ElicitationEntry {
  readonly namespace: string;
  readonly view: PendingElicitationView;
  readonly question: ElicitationQuestion;
  readonly settle: (reply: ElicitationReply) => void;
}

/** Approvals and servers' requests for input waiting for the person (P3), as the window sees them. */
export interface ApprovalPort {
  pending(namespace: Namespace): PendingApprovalView[];
  answer(namespace: Namespace, approvalId: string, answer: ApprovalAnswer): void;
  elicitations(namespace: Namespace): PendingElicitationView[];
  /**
   * Answers a request for input. An accepted form is checked (a WardError names what to fix; the
   * request stays open); an accepted URL request returns the URL for the caller to open.
   */
  answerElicitation(namespace: Namespace, elicitationId: string, action: ElicitationAction, content?: Readonly<Record<string, ElicitationFieldValue>>): URL | null;
  /** Called with the namespace name whenever its pending set changes; returns unsubscribe. */
  onChange(listener: (namespace: string) => void): () => void;
}

/** Where a pending question comes from, as its view says it: stated by the run that asks (never guessed), escaped. */
function askedBy(id: string, question: { readonly conversationId?: string | null; readonly runId?: string | null; readonly agent: string }) {
  return { id, conversationId: question.conversationId ?? null, runId: question.runId ?? null, agent: escapeOneLine(question.agent, 64) };
}

function fieldView(field: ElicitationField): ElicitationFieldView {
  const kind = field.kind === 'number' && field.integer ? 'integer' : field.kind;
  const options = field.kind === 'enum' || field.kind === 'multi' ? field.options.map((option) => ({ value: option.value, label: escapeOneLine(option.label, 200) })) : [];
  return {
    name: field.name,
    title: escapeOneLine(field.title, 100),
    description: escapeOneLine(field.description, 300),
    kind,
    required: field.required,
    sensitive: field.sensitive,
    format: field.kind === 'string' ? (field.format ?? null) : null,
    options,
    default: field.default === undefined ? null : Array.isArray(field.default) ? [...field.default] : (field.default as ElicitationFieldValue),
  };
}

export class ApprovalQueue implements Prompter, ApprovalPort {
  readonly interactive = true;
  private readonly entries = new Map<string, Entry>();
  private readonly elicitationEntries = new Map<string, ElicitationEntry>();
  private readonly listeners = new Set<(namespace: string) => void>();

  constructor(
    /** For the expiry shown; a function when the host learns it later (the admin policy). */
    private readonly timeoutMs: number | (() => number),
    private readonly now: () => number = Date.now,
  ) {}

  ask(question: PromptQuestion, signal: AbortSignal): Promise<PromptAnswer> {
    const choices = question.choices.map((choice) => FROM_PROMPT[choice]).filter((choice): choice is ApprovalAnswer => choice !== undefined);
    // The run timed out or ended: the question is withdrawn, which is a deny.
    return this.hold<PromptAnswer, Entry>(this.entries, question.namespace, signal, 'deny', (id, settle) => ({
      namespace: question.namespace,
      settle,
      view: {
        ...askedBy(id, question),
        tool: escapeOneLine(question.tool, 100),
        summary: `wants to ${PROMPT_VERB[question.kind]} ${escapeOneLine(question.value, 300)}`,
        // A command is shown whole (RunPermissions refuses to ask about one too long to show).
        details: question.command === undefined ? showArguments(question.argumentsSummary, 300) : `command: ${question.command}`,
        reason: escapeOneLine(question.reason, 200),
        choices: choices.includes('deny') ? choices : [...choices, 'deny'],
        expiresAt: this.expiresAt(question.expiresAt),
      },
    }));
  }

  /** The deadline the run set on its question, else now plus the timeout this queue was given. */
  private expiresAt(deadline?: number): string {
    return new Date(deadline ?? this.now() + (typeof this.timeoutMs === 'number' ? this.timeoutMs : this.timeoutMs())).toISOString();
  }

  /** Keeps an entry pending until it is settled, or withdrawn (`withdrawn`) when `signal` aborts. */
  private hold<A, E extends { readonly settle: (answer: A) => void }>(
    entries: Map<string, E>,
    namespace: string,
    signal: AbortSignal,
    withdrawn: A,
    make: (id: string, settle: (answer: A) => void) => E,
  ): Promise<A> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(withdrawn);
      const id = randomUUID();
      const settle = (answer: A) => {
        if (!entries.delete(id)) return;
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
        this.changed(namespace);
      };
      const onAbort = () => settle(withdrawn);
      signal.addEventListener('abort', onAbort);
      entries.set(id, make(id, settle));
      this.changed(namespace);
    });
  }

  pending(namespace: Namespace): PendingApprovalView[] {
    return [...this.entries.values()].filter((entry) => entry.namespace === namespace.name).map((entry) => entry.view);
  }

  answer(namespace: Namespace, approvalId: string, answer: ApprovalAnswer): void {
    const entry = this.entries.get(approvalId);
    if (entry === undefined || entry.namespace !== namespace.name) {
      throw new WardError('not_found', `no pending approval ${approvalId} (it may have timed out, which denied it)`);
    }
    if (!entry.view.choices.includes(answer)) throw new WardError('usage', `this approval can be answered ${entry.view.choices.join(', ')}, not ${answer}`);
    entry.settle(TO_PROMPT[answer]);
  }

  elicit(question: ElicitationQuestion, signal: AbortSignal): Promise<ElicitationReply> {
    const { request } = question;
    // Withdrawn (timeout, the call or the run ended): declined.
    return this.hold<ElicitationReply, ElicitationEntry>(this.elicitationEntries, question.namespace, signal, { action: 'decline' }, (id, settle) => ({
      namespace: question.namespace,
      question,
      settle,
      view: {
        ...askedBy(id, question),
        server: escapeOneLine(question.server, 64),
        message: escapeOneLine(request.message, 1_000),
        mode: request.mode,
        fields: request.mode === 'form' ? request.fields.map(fieldView) : [],
        url: request.mode === 'url' ? escapeOneLine(request.url.href, 500) : null,
        expiresAt: this.expiresAt(),
      },
    }));
  }

  elicitations(namespace: Namespace): PendingElicitationView[] {
    return [...this.elicitationEntries.values()].filter((entry) => entry.namespace === namespace.name).map((entry) => entry.view);
  }

  answerElicitation(namespace: Namespace, elicitationId: string, action: ElicitationAction, content: Readonly<Record<string, ElicitationFieldValue>> = {}): URL | null {
    const entry = this.elicitationEntries.get(elicitationId);
    if (entry === undefined || entry.namespace !== namespace.name) {
      throw new WardError('not_found', `no pending request for input ${elicitationId} (it may have timed out, which declined it)`);
    }
    const { request } = entry.question;
    if (action !== 'accept') {
      entry.settle({ action });
      return null;
    }
    if (request.mode === 'url') {
      entry.settle({ action });
      return request.url;
    }
    try {
      entry.settle({ action, content: completeContent(request.fields, content) });
    } catch (error) {
      if (error instanceof ElicitationRefusal) throw new WardError('usage', error.message);
      throw error;
    }
    return null;
  }

  onChange(listener: (namespace: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private changed(namespace: string): void {
    for (const listener of this.listeners) {
      try {
        listener(namespace);
      } catch {
        // One window's failure must not hold up another's.
      }
    }
  }
}
