/**
 * What a turn's CLI says, and what the broker and gateway report while it runs, into the journal:
 * stream-json messages (the init check, R3), tool calls joined with their broker outcomes by the
 * CLI's tool_use id, model calls (G4), and at the end what the CLI never reported (R8). One
 * stdout chunk's events are committed together (J1); after an abort nothing more is recorded.
 */
import { describeError } from '../../base/errors.js';
import { traceMark } from '../../base/trace.js';
import type { BrokerEvent } from '../../broker/types.js';
import type { GatewayExchange } from '../../gateway/gateway.js';
import { notOfferedReason } from '../../permissions/ungranted-tools.js';
import { checkInit, type ExpectedInit } from '../../runner/init-check.js';
import type { CliMessage, ResultMessage } from '../../runner/stream-parser.js';
import { TextDeltaCoalescer } from '../../runner/text-deltas.js';
import { boundedArguments, resultPreview, truncateText, MAX_TEXT_EVENT_CHARS } from './event-bounds.js';
import type { TurnJournal } from './turn-journal.js';

/** A broker call's outcome, kept until the CLI's tool_result for it arrives (or the turn ends). */
interface FinishedCall {
  /** The CLI's tool_use id the call answers; null when the call came without one. */
  readonly toolUseId: string | null;
  readonly tool: string;
  readonly ok: boolean;
  readonly errorCode?: string;
  readonly bytes: number;
  readonly durationMs: number;
}

/** What the stream needs of its turn. */
export interface StreamControl {
  /** Fails the turn with this reason (the first one wins) and kills the CLI. */
  abort(reason: string): void;
  aborted(): boolean;
  /** True once the turn settled: a model call ending later is not part of it. */
  settled(): boolean;
}


export class TurnStream {
  private readonly deltas: TextDeltaCoalescer;
  private resultMessage: ResultMessage | null = null;
  private markResultSeen: () => void = () => undefined;
  /** Resolves at the CLI's result line: a warm session's turn ends there, not at the exit of the CLI. */
  readonly resultSeen = new Promise<null>((resolve) => (this.markResultSeen = () => resolve(null)));
  private lastDiagnosticText: string | null = null;
  // Broker bookkeeping: calls dispatched upstream and not finished; finished outcomes no tool_result took yet, in finish order.
  private readonly brokerInFlight = new Set<string>();
  private readonly finished: FinishedCall[] = [];
  /** Set once a call names its tool_use (the pinned CLI's all do): from then on outcomes are joined by id only. */
  private cliNamesToolUses = false;
  private tracedFirstToken = false;
  /** The turn's first Messages call was compared with the run's model. */
  private modelChecked = false;
  /** `offered` false: the launch did not give the CLI this tool, which it then refuses itself. */
  private readonly toolUses = new Map<string, { tool: string; startedAt: number; offered: boolean }>();
  /** Every tool_use id the CLI reported this turn: a broker call naming none of them was not the CLI's. */
  private readonly reportedToolUses = new Set<string>();

  constructor(
    private readonly journal: TurnJournal,
    private readonly control: StreamControl,
  ) {
    this.deltas = new TextDeltaCoalescer({
      emit: (delta) => this.journal.emit('assistant_delta', delta),
      redact: (text) => this.journal.redact(text),
      secrets: () => this.journal.secretList(),
      maxChars: MAX_TEXT_EVENT_CHARS,
      onError: (error) => this.control.abort(`aborted: could not record the turn (${describeError(error)})`),
    });
  }

  /** The CLI's terminal result line, once it printed one. */
  get result(): ResultMessage | null {
    return this.resultMessage;
  }

  /** The CLI's last stdout line that was not stream-json (redacted): what it said before it died. */
  get lastDiagnostic(): string | null {
    return this.lastDiagnosticText;
  }

  /** Broker calls dispatched upstream and not finished: their effect is unknown if the turn ends now (R8). */
  get callsInFlight(): number {
    return this.brokerInFlight.size;
  }

  /** A tool the CLI called has not answered yet (the idle watch waits for it). */
  toolsRunning(): boolean {
    return this.toolUses.size > 0;
  }

  onChunk(messages: readonly CliMessage[], expected: ExpectedInit): void {
    try {
      this.journal.batch(() => {
        // After an abort nothing more the child says is recorded as part of the turn.
        for (const message of messages) if (!this.control.aborted()) this.onMessage(message, expected);
        if (!this.control.aborted()) this.deltas.afterChunk();
      });
    } catch (error) {
      // A journal failure must end the turn, not leave it running unseen.
      this.control.abort(`aborted: could not record the turn (${describeError(error)})`);
    }
  }

  onBrokerEvent(event: BrokerEvent): void {
    if (event.kind === 'tool_call_started') {
      this.brokerInFlight.add(event.callId);
      if (event.toolUseId !== null) this.cliNamesToolUses = true;
    } else if (event.kind === 'tool_call_finished') {
      this.brokerInFlight.delete(event.callId);
      this.finished.push({ toolUseId: event.toolUseId, tool: event.tool, ok: event.ok, errorCode: event.errorCode, bytes: event.bytes, durationMs: event.durationMs });
    } else this.journal.emit('tool_refused', { tool: event.tool, reason: this.journal.redact(event.reason).slice(0, 500) });
  }

  /**
   * G4: each model call, the model it named, its status and its tokens; a call ending after the
   * turn settled is not part of it. The turn's first Messages call naming another model than the
   * run's (`runModel`, null: the CLI's default) is a substitution the person is told of.
   */
  onModelCall(exchange: GatewayExchange, runModel: string | null): void {
    if (this.control.settled()) return;
    const model = exchange.model === null ? null : this.journal.redact(exchange.model).slice(0, 200);
    try {
      this.journal.emit('model_call', { ...exchange, model, problem: exchange.problem === null ? null : this.journal.redact(exchange.problem) });
      if (!this.modelChecked && exchange.path === '/v1/messages' && model !== null && runModel !== null) {
        this.modelChecked = true;
        if (model !== runModel) this.journal.emit('model_substituted', { runModel: runModel.slice(0, 200), requested: model });
      }
    } catch {
      // the journal is failing: the stream's own handling ends the turn
    }
  }

  /** Streamed text the turn no longer takes (it ended): the coalescer's timer stops. */
  close(): void {
    this.deltas.close();
  }

  /** What the CLI never reported: streamed text, tool results, calls drained after a stop. Throws when the journal fails. */
  recordUnreported(): void {
    // Text streamed before the turn ended stays, even without its final assistant_text.
    if (!this.control.aborted()) this.deltas.finish();
    // Every tool_call gets a tool_result, even when the CLI died before printing one; the
    // model never saw it (delivered: false), but the upstream call may have had its effect.
    for (const [toolUseId, use] of this.toolUses) {
      const broker = this.takeFinished(toolUseId, use.tool);
      this.journal.emit('tool_result', {
        toolUseId,
        tool: use.tool,
        ok: broker?.ok ?? false,
        bytes: broker?.bytes ?? 0,
        durationMs: Math.round(broker?.durationMs ?? performance.now() - use.startedAt),
        errorCode: broker === undefined ? 'no_result' : broker.ok ? null : (broker.errorCode ?? 'error'),
        delivered: false,
      });
    }
    // Calls no tool_result accounted for: the CLI stopped waiting (seen only after the drain), or never asked.
    for (const call of this.finished) {
      const askedByCli = call.toolUseId === null ? !this.cliNamesToolUses : this.reportedToolUses.has(call.toolUseId);
      this.journal.emit('tool_drained', {
        tool: call.tool,
        ok: call.ok,
        errorCode: call.ok ? null : (call.errorCode ?? 'error'),
        bytes: call.bytes,
        durationMs: Math.round(call.durationMs),
        cause: askedByCli ? 'cli_stopped_waiting' : 'not_asked_by_the_cli',
      });
    }
  }

  private onMessage(message: CliMessage, expected: ExpectedInit): void {
    const journal = this.journal;
    switch (message.kind) {
      case 'init': {
        traceMark('cli-init');
        const problem = checkInit(message, expected);
        if (problem !== null) this.control.abort(`aborted: ${problem}`);
        return;
      }
      case 'text_delta':
        if (!this.tracedFirstToken) traceMark('first-token');
        this.tracedFirstToken = true;
        this.deltas.push(message.text);
        return;
      case 'assistant_text':
        this.deltas.complete();
        journal.emit('assistant_text', { text: truncateText(journal.redact(message.text)) });
        return;
      case 'tool_use':
        return this.onToolUse(message, expected.tools);
      case 'tool_result':
        return this.onToolResult(message);
      case 'result':
        traceMark('cli-result');
        this.resultMessage = message;
        this.markResultSeen();
        journal.emit('usage', {
          inputTokens: message.usage.inputTokens,
          outputTokens: message.usage.outputTokens,
          cacheReadTokens: message.usage.cacheReadTokens,
          cacheCreationTokens: message.usage.cacheCreationTokens,
          costUsd: message.costUsd,
        });
        return;
      case 'api_retry':
        journal.emit('model_retry', { attempt: message.attempt, maxRetries: message.maxRetries, delayMs: message.delayMs, status: message.status, error: message.error });
        return;
      case 'provider_error':
        this.deltas.complete();
        journal.emit('provider_error', { error: message.error, text: truncateText(journal.redact(message.text)) });
        return;
      case 'diagnostic':
        this.lastDiagnosticText = journal.redact(message.detail);
        journal.emit('diagnostic', { source: 'cli_stdout', reason: message.reason, detail: this.lastDiagnosticText, bytes: message.bytes });
        return;
      case 'ignored':
        return;
    }
  }

  private onToolUse(message: Extract<CliMessage, { kind: 'tool_use' }>, offered: readonly string[]): void {
    const tool = message.name.startsWith('mcp__ward__') ? message.name.slice('mcp__ward__'.length) : message.name;
    this.toolUses.set(message.toolUseId, { tool, startedAt: performance.now(), offered: offered.includes(message.name) });
    this.reportedToolUses.add(message.toolUseId);
    this.journal.emit('tool_call', { toolUseId: message.toolUseId, tool, arguments: boundedArguments(message.input, (text) => this.journal.redact(text)) });
  }

  private onToolResult(message: Extract<CliMessage, { kind: 'tool_result' }>): void {
    const journal = this.journal;
    const use = this.toolUses.get(message.toolUseId);
    this.toolUses.delete(message.toolUseId);
    const tool = use?.tool ?? null;
    const broker = this.takeFinished(message.toolUseId, tool);
    journal.emit('tool_result', {
      toolUseId: message.toolUseId,
      tool,
      ok: !message.isError && (broker?.ok ?? true),
      bytes: broker?.bytes ?? message.bytes,
      durationMs: Math.round(broker?.durationMs ?? (use === undefined ? 0 : performance.now() - use.startedAt)),
      errorCode: broker?.ok === false ? (broker.errorCode ?? 'error') : message.isError ? 'tool_error' : null,
      ...resultPreview(journal.redact(message.text)),
    });
    // A native tool no grant offered: the person learns which grant would (the model was told in its instructions).
    const reason = use !== undefined && !use.offered && message.isError ? notOfferedReason(use.tool) : null;
    if (reason !== null) journal.emit('tool_refused', { tool: use!.tool, reason });
  }

  /**
   * The broker outcome of the call a tool_result answers, joined by the CLI's tool_use id (the
   * pinned CLI sends it with every tools/call). Fallback, only for a CLI that sends none: the
   * oldest unclaimed outcome of the same tool, right while calls of one tool finish in order.
   */
  private takeFinished(toolUseId: string, tool: string | null): FinishedCall | undefined {
    let index = this.finished.findIndex((call) => call.toolUseId === toolUseId);
    if (index === -1 && !this.cliNamesToolUses) index = this.finished.findIndex((call) => call.tool === tool);
    return index === -1 ? undefined : this.finished.splice(index, 1)[0];
  }
}
