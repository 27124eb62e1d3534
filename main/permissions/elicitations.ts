/**
 * Elicitations of one run: an upstream server asks the person for input during a tool call.
 * The question goes where permission questions go (the terminal, the desktop's approval area),
 * one at a time, bounded by the prompt timeout; no one to ask, no answer in time, or a run that
 * is ending all decline. Every request and answer is journaled, the values of sensitive fields
 * replaced. Nothing here reaches the model: the answer goes back to the server that asked.
 */
import { randomUUID } from 'node:crypto';
import { describeError } from '../base/errors.js';
import { completeContent, redactedContent, sensitiveValues, type ElicitationReply, type ElicitationRequest, type ElicitationValue, type Elicitor } from '../upstreams/elicitation.js';
import type { Prompter } from './prompter.js';

/** Who settled an elicitation. */
export type ElicitationAnswerer = 'person' | 'timeout' | 'no_one' | 'ended';

export interface ElicitationJournal {
  requested(record: { readonly elicitationId: string; readonly server: string; readonly request: ElicitationRequest }): void;
  answered(record: {
    readonly elicitationId: string;
    readonly server: string;
    readonly action: ElicitationReply['action'];
    readonly by: ElicitationAnswerer;
    /** Accepted form values, sensitive ones replaced; null otherwise. */
    readonly content: Readonly<Record<string, ElicitationValue>> | null;
  }): void;
  refused(record: { readonly server: string; readonly reason: string }): void;
}

export interface RunElicitationsOptions {
  readonly prompter: Prompter;
  readonly timeoutMs: number;
  readonly agentName: string;
  readonly namespace: string;
  readonly conversationId: string;
  readonly runId: string;
  readonly journal: ElicitationJournal;
  /** False once the run is stopping: a request then is declined unasked. */
  readonly accepting: () => boolean;
  /**
   * A sensitive answer, before it goes to the server: a server that echoes it (in a result, an
   * error) must not carry it into the journal, the model's context or the CLI's transcript.
   */
  readonly keepSecret: (value: string) => void;
}

export class RunElicitations {
  private readonly ended = new AbortController();
  /** One question at a time, like permission questions. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: RunElicitationsOptions) {}

  /** The elicitor for one server's session. */
  for(server: string): Elicitor {
    return {
      ask: (request, signal) => {
        const asked = this.queue.then(() => this.ask(server, request, signal));
        this.queue = asked.catch(() => undefined);
        return asked;
      },
      refused: (reason) => this.options.journal.refused({ server, reason }),
    };
  }

  /** The run is over: open questions are withdrawn (declined) and none are asked. */
  close(): void {
    this.ended.abort();
  }

  private async ask(server: string, request: ElicitationRequest, callSignal: AbortSignal): Promise<ElicitationReply> {
    const { journal, prompter } = this.options;
    const elicitationId = randomUUID();
    journal.requested({ elicitationId, server, request });
    const settle = (reply: ElicitationReply, by: ElicitationAnswerer): ElicitationReply => {
      const accepted = reply.action === 'accept' && request.mode === 'form' && reply.content !== undefined ? reply.content : null;
      if (accepted !== null && request.mode === 'form') for (const value of sensitiveValues(request.fields, accepted)) this.options.keepSecret(value);
      const content = accepted !== null && request.mode === 'form' ? redactedContent(request.fields, accepted) : null;
      journal.answered({ elicitationId, server, action: reply.action, by, content });
      return reply;
    };
    if (this.ended.signal.aborted || !this.options.accepting()) return settle({ action: 'decline' }, 'ended');
    if (!prompter.interactive || prompter.elicit === undefined) return settle({ action: 'decline' }, 'no_one');

    const controller = new AbortController();
    const withdraw = (): void => controller.abort();
    this.ended.signal.addEventListener('abort', withdraw, { once: true });
    callSignal.addEventListener('abort', withdraw, { once: true });
    const timer = setTimeout(withdraw, this.options.timeoutMs);
    try {
      const question = { server, agent: this.options.agentName, namespace: this.options.namespace, conversationId: this.options.conversationId, runId: this.options.runId, request };
      const withdrawn = new Promise<null>((resolve) => controller.signal.addEventListener('abort', () => resolve(null), { once: true }));
      const reply = await Promise.race([prompter.elicit(question, controller.signal).catch(() => null), withdrawn]);
      if (this.ended.signal.aborted || callSignal.aborted) return settle({ action: 'cancel' }, 'ended');
      if (controller.signal.aborted) return settle({ action: 'decline' }, 'timeout');
      // The prompter failed: as if no one were there.
      if (reply === null) return settle({ action: 'decline' }, 'no_one');
      if (reply.action !== 'accept' || request.mode === 'url') return settle(reply.action === 'accept' ? { action: 'accept' } : { action: reply.action }, 'person');
      // Prompters check values as the person types; checked again here, so nothing unchecked is sent.
      return settle({ action: 'accept', content: completeContent(request.fields, reply.content ?? {}) }, 'person');
    } catch (error) {
      journal.refused({ server, reason: `the answer could not be used: ${describeError(error)}`.slice(0, 500) });
      return settle({ action: 'decline' }, 'no_one');
    } finally {
      clearTimeout(timer);
      this.ended.signal.removeEventListener('abort', withdraw);
      callSignal.removeEventListener('abort', withdraw);
    }
  }
}
