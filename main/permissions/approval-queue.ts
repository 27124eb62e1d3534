/**
 * The desktop's prompter (P3): a permission question becomes a pending approval the window
 * shows; the person's answer (or the run's timeout, which aborts the question) settles it.
 * Everything shown is escaped and bounded here, in main, before it reaches the page (P1).
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, PendingApprovalView } from '../../preload/contract.js';
import { escapeOneLine } from '../../preload/display.js';
import { WardError } from '../base/errors.js';
import type { Namespace } from '../namespaces/namespace.js';
import { PROMPT_VERB, type PromptAnswer, type PromptQuestion, type Prompter } from './prompter.js';

const TO_PROMPT: Readonly<Record<ApprovalAnswer, PromptAnswer>> = { allow_once: 'once', allow_conversation: 'conversation', allow_agent: 'always', deny: 'deny' };
const FROM_PROMPT: Readonly<Record<PromptAnswer, ApprovalAnswer>> = { once: 'allow_once', conversation: 'allow_conversation', always: 'allow_agent', deny: 'deny' };

interface Entry {
  readonly namespace: string;
  readonly view: PendingApprovalView;
  readonly settle: (answer: PromptAnswer) => void;
}

/** Approvals waiting for the person (P3), as the window sees them. */
export interface ApprovalPort {
  pending(namespace: Namespace): PendingApprovalView[];
  answer(namespace: Namespace, approvalId: string, answer: ApprovalAnswer): void;
  /** Called with the namespace name whenever its pending set changes; returns unsubscribe. */
  onChange(listener: (namespace: string) => void): () => void;
}

export class ApprovalQueue implements Prompter, ApprovalPort {
  readonly interactive = true;
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(namespace: string) => void>();

  constructor(
    /** For the expiry shown; a function when the host learns it later (the admin policy). */
    private readonly timeoutMs: number | (() => number),
    private readonly now: () => number = Date.now,
  ) {}

  ask(question: PromptQuestion, signal: AbortSignal): Promise<PromptAnswer> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve('deny');
      const id = randomUUID();
      const choices = question.choices.map((choice) => FROM_PROMPT[choice]);
      const view: PendingApprovalView = {
        id,
        // Stated by the run that asks (RunPermissions), never guessed.
        conversationId: question.conversationId ?? null,
        runId: question.runId ?? null,
        agent: escapeOneLine(question.agent, 64),
        tool: escapeOneLine(question.tool, 100),
        summary: `wants to ${PROMPT_VERB[question.kind]} ${escapeOneLine(question.value, 300)}`,
        // A command is shown whole (RunPermissions refuses to ask about one too long to show).
        details: question.command === undefined ? escapeOneLine(question.argumentsSummary, 300) : `command: ${question.command}`,
        reason: escapeOneLine(question.reason, 200),
        choices: choices.includes('deny') ? choices : [...choices, 'deny'],
        expiresAt: new Date(this.now() + (typeof this.timeoutMs === 'number' ? this.timeoutMs : this.timeoutMs())).toISOString(),
      };
      const settle = (answer: PromptAnswer) => {
        if (!this.entries.delete(id)) return;
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
        this.changed(question.namespace);
      };
      // The run timed out or ended: the question is withdrawn, which is a deny.
      const onAbort = () => settle('deny');
      signal.addEventListener('abort', onAbort);
      this.entries.set(id, { namespace: question.namespace, view, settle });
      this.changed(question.namespace);
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
