/**
 * The desktop's prompter (P3): a permission question becomes a pending approval the window
 * shows; the person's answer (or the run's timeout, which aborts the question) settles it.
 * Everything shown is escaped and bounded here, in main, before it reaches the page (P1).
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, PendingApprovalView } from '../../preload/contract.js';
import { escapeForTerminal } from '../cli/format-event.js';
import type { ApprovalPort } from '../core/app-service.js';
import { WardError } from '../core/errors.js';
import type { Namespace } from '../namespaces/namespace.js';
import { PROMPT_VERB, type PromptAnswer, type PromptQuestion, type Prompter } from '../permissions/prompter.js';

const TO_PROMPT: Readonly<Record<ApprovalAnswer, PromptAnswer>> = { allow_once: 'once', allow_conversation: 'conversation', deny: 'deny' };
const FROM_PROMPT: Partial<Record<PromptAnswer, ApprovalAnswer>> = { once: 'allow_once', conversation: 'allow_conversation', deny: 'deny' };
/** Control, bidi, zero-width and line-break characters shown escaped; length bounded. */
export function displayText(text: string, max: number): string {
  return escapeForTerminal(text.replace(/[\n\t\u061c\u180e\u2028\u2029]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`), max);
}

interface Entry {
  readonly namespace: string;
  readonly view: PendingApprovalView;
  readonly settle: (answer: PromptAnswer) => void;
}

export class ApprovalQueue implements Prompter, ApprovalPort {
  readonly interactive = true;
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(namespace: string) => void>();

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  ask(question: PromptQuestion, signal: AbortSignal): Promise<PromptAnswer> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve('deny');
      const id = randomUUID();
      const choices = question.choices.map((choice) => FROM_PROMPT[choice]).filter((choice): choice is ApprovalAnswer => choice !== undefined);
      const view: PendingApprovalView = {
        id,
        // Stated by the run that asks (RunPermissions), never guessed.
        conversationId: question.conversationId ?? null,
        runId: question.runId ?? null,
        agent: displayText(question.agent, 64),
        tool: displayText(question.tool, 100),
        summary: `wants to ${PROMPT_VERB[question.kind]} ${displayText(question.value, 300)}`,
        details: displayText(question.argumentsSummary, 300),
        reason: displayText(question.reason, 200),
        choices: choices.includes('deny') ? choices : [...choices, 'deny'],
        expiresAt: new Date(this.now() + this.timeoutMs).toISOString(),
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
