/**
 * One turn = one admitted run. A Turn holds that turn's state and runs its steps in order:
 *   prepare     — journal run_started, check the pin (R1) and the policy (P5), read the credential
 *   planLaunch  — permissions (P1–P4); the child's argv, allowlisted env (R2, R3) and sandbox files
 *   acquire     — the conversation's warm CLI when its launch is the same (issue 19), else a new
 *                 one: the run's upstreams (B3), the broker capability (B1), a private run folder
 *                 with mcp.json (B2), the sandbox (./cli-session.ts holds all of it)
 *   stream      — stream-json → journal, init check (R3), turn timeout; ends at the CLI's result
 *                 (a warm session) or its exit
 *   finish      — keep the session warm, or kill the group, remove the folder, close the
 *                 capability and drain (B7); record what the CLI never reported, settle (R5, R8)
 * Every event is committed to the journal before any subscriber hears of it.
 */
import { describeError } from '../../base/errors.js';
import { traceMark } from '../../base/trace.js';
import type { ConnectionManager } from '../../connections/index.js';
import type { BrokerEvent, RunBinding, RunRegistration } from '../../broker/types.js';
import type { GatewayExchange, GatewayRegistration, ProviderRoute } from '../../gateway/gateway.js';
import type { Namespace } from '../../namespaces/namespace.js';
import { PERMISSION_DECISION_EVENT } from '../../permissions/audit.js';
import type { Rule } from '../../permissions/grants.js';
import type { Prompter } from '../../permissions/prompter.js';
import { DEFAULT_PROMPT_TIMEOUT_MS, type RunPermissions } from '../../permissions/run-permissions.js';
import { RunElicitations } from '../../permissions/elicitations.js';
import type { Elicitor } from '../../upstreams/elicitation.js';
import { modelAllowed, type AdminPolicy } from '../../policy/policy.js';
import type { ModelCredential } from '../../providers/model-profile.js';
import { readinessFor, type CheckedReadiness } from './readiness.js';
import type { CliExit, CliLaunch, CliProcess } from '../../runner/child.js';
import { checkInit } from '../../runner/init-check.js';
import type { PinLocation } from '../../runner/pin.js';
import type { SandboxEngine, SandboxStatus } from '../../sandbox/engine.js';
import type { CliMessage, ResultMessage } from '../../runner/stream-parser.js';
import { TextDeltaCoalescer } from '../../runner/text-deltas.js';
import { nativeTranscriptExists } from '../../runner/transcript.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import type { RunState } from '../../store/runs.js';
import type { UpstreamOptions } from '../../upstreams/upstreams.js';
import { CliSession, type TurnHooks } from './cli-session.js';
import { conversationPlan, launchSpec, openSessionTools, runPermissions, startSession, type LaunchSpec, type Plan } from './launch.js';
import { IdleWatch } from './idle-watch.js';
import type { RunLimits } from '../run-limits.js';
import { boundedArguments, firstLine, resultPreview, truncateText, MAX_TEXT_EVENT_CHARS } from './event-bounds.js';
import { TurnJournal } from './turn-journal.js';
import { warmKey, type WarmSessions } from './warm-sessions.js';
import { claudeConfigDir } from './workspace.js';

/** What every turn of one Ward process shares (wired once by the composition root). */
export interface TurnDeps {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly policy: AdminPolicy | null;
  /**
   * Still starting when the turn is admitted: awaited only where the turn registers with it.
   * `prepareSessions` loads its MCP server code; called once the child is spawned, so it loads
   * while the CLI starts rather than before the spawn.
   */
  readonly broker: Promise<{ register(binding: RunBinding): RunRegistration; prepareSessions?(): unknown }>;
  /** The model gateway (G1): the child reaches the provider only through it, with a run capability. */
  readonly gateway: Promise<{ register(route: ProviderRoute): GatewayRegistration }>;
  readonly prompter: Prompter;
  readonly promptTimeoutMs: number | undefined;
  readonly stopGraceMs: number;
  /** How long a turn may take and may stay silent; read at each turn (settings.json can change). */
  readonly limits: () => RunLimits;
  readonly pin: PinLocation | undefined;
  readonly maxLineBytes: number | undefined;
  readonly upstreamOptions: UpstreamOptions | undefined;
  readonly tmpRoot: string | undefined;
  readonly sandbox: SandboxEngine;
  /** What the sandbox found on this machine (probed once, before the first admission). */
  readonly sandboxStatus: SandboxStatus;
  readonly resolveCredential: (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> | ModelCredential;
  /**
   * The namespace's connections; every credential value they read is told to `onSecret` (redacted
   * from the journal), and `elicit` asks the person when a server asks for input.
   */
  readonly openConnections: (ns: Namespace, onSecret: (value: string) => void, elicit?: (connection: string) => Elicitor) => Promise<ConnectionManager>;
}

export interface TurnInput {
  readonly namespace: Namespace;
  readonly store: NamespaceStore;
  readonly conversationId: string;
  readonly runId: string;
  readonly requestId: string;
  readonly prompt: string;
  readonly rules: readonly Rule[];
  /** The preflight's readiness check just before admission, if there was one. */
  readonly checked?: CheckedReadiness;
}

export interface Outcome {
  readonly state: RunState;
  readonly reason: string | null;
}

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

class StopBeforeSpawn extends Error {}

const NO_CONVERSATION = 'No conversation found';

export class Turn {
  state: 'admitted' | 'running' | 'stopping' | 'done' = 'admitted';
  stopRequested = false;
  stopReason = '';
  private graceTimer: NodeJS.Timeout | undefined;
  private turnTimer: NodeJS.Timeout | undefined;
  private idleWatch: IdleWatch | undefined;
  /** Set by a failed init check, the turn timeout or a journal failure: the turn fails with this reason. */
  private abortReason: string | null = null;

  private readonly journal: TurnJournal;
  private readonly deltas: TextDeltaCoalescer;
  private permissions: RunPermissions | undefined;
  private elicitations: RunElicitations | undefined;
  /** The CLI process this turn runs in, with everything that lives as long as it. */
  private session: CliSession | undefined;
  private plan: Plan | undefined;
  private expectedTools: readonly string[] = [];
  private result: ResultMessage | null = null;
  /** A warm session's turn ends at its result line, not at the exit of the CLI. */
  private resultSeen: (() => void) | undefined;
  private lastDiagnostic: string | null = null;
  // Broker bookkeeping: calls dispatched upstream and not finished; finished outcomes no tool_result took yet, in finish order.
  private readonly brokerInFlight = new Set<string>();
  private readonly finished: FinishedCall[] = [];
  /** Set once a call names its tool_use (the pinned CLI's all do): from then on outcomes are joined by id only. */
  private cliNamesToolUses = false;
  private tracedFirstToken = false;
  private readonly toolUses = new Map<string, { tool: string; startedAt: number }>();
  /** Every tool_use id the CLI reported this turn: a broker call naming none of them was not the CLI's. */
  private readonly reportedToolUses = new Set<string>();

  constructor(
    private readonly deps: TurnDeps,
    private readonly input: TurnInput,
    /** The desktop's kept CLI processes; null where every turn starts its own CLI (`ward run`). */
    private readonly warm: WarmSessions | null = null,
  ) {
    this.journal = new TurnJournal(input.store, input.conversationId, input.runId);
    this.deltas = new TextDeltaCoalescer({
      emit: (delta) => this.journal.emit('assistant_delta', delta),
      redact: (text) => this.journal.redact(text),
      secrets: () => this.journal.secretList(),
      maxChars: MAX_TEXT_EVENT_CHARS,
      onError: (error) => this.abort(`aborted: could not record the turn (${describeError(error)})`),
    });
  }

  /** Runs the turn to its end; never throws (a failure is the outcome). */
  async run(): Promise<Outcome> {
    let outcome: Outcome = { state: 'failed', reason: 'the run ended before the CLI started' };
    try {
      const plan = await this.prepare();
      const launch = await this.planLaunch(plan);
      const end = await this.stream(await this.acquire(plan, launch));
      traceMark('cli-exited');
      outcome = this.decide(end);
    } catch (error) {
      if (error instanceof StopBeforeSpawn || this.stopRequested) outcome = { state: 'stopped', reason: this.stopReason };
      else outcome = { state: 'failed', reason: this.journal.redact(describeError(error)).slice(0, 1000) };
    } finally {
      await this.release();
      this.recordUnreported();
      outcome = this.settle(outcome);
    }
    return outcome;
  }

  /**
   * R6: interrupt the child, SIGKILL its process group after the grace period; the drain
   * happens in release(). Calling it again escalates at once.
   */
  requestStop(reason: string): void {
    if (this.stopRequested) {
      this.child?.killGroup();
      return;
    }
    this.stopRequested = true;
    this.stopReason = reason;
    if (this.state === 'admitted' || this.state === 'running') {
      this.input.store.runs.transition(this.input.runId, 'stopping', reason);
      this.state = 'stopping';
      this.journal.emit('run_stopping', { reason });
    }
    this.interruptThenKill();
  }

  childPid(): number | undefined {
    return this.child?.pid;
  }

  private get child(): CliProcess | undefined {
    return this.session?.child;
  }

  private interruptThenKill(): void {
    this.child?.interrupt();
    this.graceTimer ??= setTimeout(() => this.child?.killGroup(), this.deps.stopGraceMs);
  }

  private abort(reason: string): void {
    this.abortReason ??= reason;
    this.child?.killGroup();
  }

  private checkNotStopped(): void {
    if (this.stopRequested) throw new StopBeforeSpawn();
  }

  /** What the turn will run with; journals run_started and the prompt, then checks pin, policy and credential. */
  private async prepare(): Promise<Plan> {
    const { deps, input } = this;
    const { store, namespace: ns } = input;
    // The sandbox's proxies start while the turn is prepared, not after it.
    deps.sandbox.prewarm();
    const base = conversationPlan(deps, store, ns, input.conversationId);
    this.journal.emit('run_started', {
      requestId: input.requestId,
      agent: base.agentName,
      agentVersion: base.conversation.agentVersion,
      model: base.profile.model,
      session: base.resume ? 'resume' : 'new',
      workspace: base.workspace,
      // The audit trail says whether the OS sandbox confined this turn (probed once per process).
      sandboxed: deps.sandboxStatus.confined,
    });
    this.journal.emit('user_prompt', { text: truncateText(input.prompt) });
    traceMark('run-started');

    const { pinned, access } = await readinessFor(deps, ns, base.spec, base.profile, (value) => this.journal.addSecret(value), input.checked);
    traceMark('prepared');
    this.checkNotStopped();
    // Read before anything starts: a malformed settings.json fails the turn with nothing started.
    const limits = deps.limits();
    const warm = this.warm !== null && limits.warmSessionMs > 0;
    const plan: Plan = { ...base, pinned, access, limits, warm };
    this.plan = plan;
    return plan;
  }

  /** Permissions (P1–P4) and how the child would be started: argv, environment, sandbox files and hosts. */
  private async planLaunch(plan: Plan): Promise<LaunchSpec> {
    const { deps, input } = this;
    // The value, reason and summary quote what the model asked for, which may hold a secret of this turn.
    this.permissions = runPermissions(deps, plan, input, (record) => {
      const redact = (text: string) => this.journal.redact(text);
      this.journal.emit(PERMISSION_DECISION_EVENT, {
        ...record,
        value: record.value === null ? null : redact(record.value),
        argumentsSummary: redact(record.argumentsSummary),
        reason: redact(record.reason),
      });
    });
    this.openElicitations(plan);
    return launchSpec(deps, plan, this.permissions, (value) => this.journal.addSecret(value));
  }

  /** The conversation's warm CLI when it was started the same way, else a new one with its upstreams, capabilities, folder and sandbox. */
  private async acquire(plan: Plan, spec: LaunchSpec): Promise<CliLaunch | null> {
    const { store, conversationId, runId } = this.input;
    // A turn of this conversation run elsewhere since (`ward run`, another Ward) is not in the kept CLI's memory.
    const kept = plan.warm ? await this.warm!.take(warmKey(this.input.namespace, this.input.conversationId), spec.fingerprint, store.runs.latestId(conversationId, runId)) : undefined;
    this.expectedTools = spec.expectedTools;
    if (kept !== undefined) {
      this.session = kept;
      for (const secret of kept.secrets) this.journal.addSecret(secret);
      kept.bind(this.hooks(plan), runId);
      this.permissions!.setChildReach(kept.sandboxed?.reachable);
      traceMark('warm-session');
      this.markRunning();
      return null;
    }
    const session = new CliSession(spec.fingerprint, runId);
    this.session = session;
    session.bind(this.hooks(plan), runId);
    await openSessionTools(this.deps, this.input.namespace, plan, session, (value) => this.journal.addSecret(value));
    const launch = await startSession(this.deps, plan, spec, session);
    this.permissions!.setChildReach(session.sandboxed?.reachable);
    this.markRunning();
    // A warm session's CLI takes its turns on stdin; a one-turn CLI gets the prompt at start.
    return plan.warm ? launch : { ...launch, prompt: this.input.prompt };
  }

  /** What this turn answers for the CLI process it runs in (./cli-session.ts). */
  private hooks(plan: Plan): TurnHooks {
    const permissions = this.permissions!;
    const elicitations = this.elicitations!;
    const { refresh } = plan.access;
    const expected = { sessionId: plan.conversation.cliSessionId, version: plan.pinned.version };
    return {
      accepting: () => this.state === 'running',
      authorizeToolCall: (tool, callArgs) => permissions.authorizeToolCall(tool, callArgs),
      approve: (request) => permissions.approve(request),
      onBrokerEvent: (event) => this.onBrokerEvent(event),
      onModelCall: (exchange) => this.onModelCall(exchange),
      credential: () => plan.access.credential(),
      refreshCredential: refresh === undefined ? undefined : () => refresh.call(plan.access),
      modelRefusal: (model) => (modelAllowed(this.deps.policy, model) ? null : `model ${model} is not allowed by ${this.deps.policy!.reason}`),
      decideHost: async ({ host, port }) => {
        const decision = await permissions.decideHost(host, port);
        return decision.allowed ? { allow: true } : { allow: false, reason: `Ward denied ${host}:${port}: ${decision.reason}` };
      },
      elicitor: (server) => elicitations.for(server),
      onMessages: (messages) => this.onChunk(messages, expected),
    };
  }

  private onBrokerEvent(event: BrokerEvent): void {
    if (event.kind === 'tool_call_started') {
      this.brokerInFlight.add(event.callId);
      if (event.toolUseId !== null) this.cliNamesToolUses = true;
    } else if (event.kind === 'tool_call_finished') {
      this.brokerInFlight.delete(event.callId);
      this.finished.push({ toolUseId: event.toolUseId, tool: event.tool, ok: event.ok, errorCode: event.errorCode, bytes: event.bytes, durationMs: event.durationMs });
    } else this.journal.emit('tool_refused', { tool: event.tool, reason: this.journal.redact(event.reason).slice(0, 500) });
  }

  /** Servers' requests for input during this turn's calls: asked like permission questions, journaled, never shown to the model. */
  private openElicitations(plan: Plan): RunElicitations {
    const { deps, input } = this;
    const journal = this.journal;
    const redact = (text: string) => journal.redact(text);
    this.elicitations = new RunElicitations({
      prompter: deps.prompter,
      timeoutMs: deps.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS,
      agentName: plan.agentName,
      namespace: input.namespace.name,
      conversationId: input.conversationId,
      runId: input.runId,
      accepting: () => this.state === 'running',
      journal: {
        requested: ({ elicitationId, server, request }) =>
          journal.emit('elicitation_requested', {
            elicitationId,
            server,
            mode: request.mode,
            message: truncateText(redact(request.message)),
            fields: request.mode === 'form' ? request.fields.map(({ name, kind, required, sensitive }) => ({ name, kind, required, sensitive })) : [],
            urlOrigin: request.mode === 'url' ? request.url.origin : null,
          }),
        answered: ({ content, ...answer }) =>
          journal.emit('elicitation_answered', {
            ...answer,
            content: content === null ? null : Object.fromEntries(Object.entries(content).map(([name, value]) => [name, typeof value === 'string' ? redact(value) : value])),
          }),
        refused: ({ server, reason }) => journal.emit('elicitation_refused', { server, reason: redact(reason).slice(0, 500) }),
      },
    });
    return this.elicitations;
  }

  /** G4: each model call, its status and its tokens; a call ending after the turn settled is not part of it. */
  private onModelCall(exchange: GatewayExchange): void {
    if (this.state === 'done') return;
    try {
      this.journal.emit('model_call', { ...exchange, problem: exchange.problem === null ? null : this.journal.redact(exchange.problem) });
    } catch {
      // the journal is failing: the stream's own handling ends the turn
    }
  }

  private markRunning(): void {
    this.checkNotStopped();
    this.input.store.runs.transition(this.input.runId, 'running');
    this.state = 'running';
  }

  /**
   * Starts the new CLI (or hands the warm one this turn's prompt) and journals what it says until
   * the turn ends: a warm session's at its result, a one-turn CLI's at its exit (or the turn
   * times out). Resolves with the exit, or null when the CLI lives on after its result.
   */
  private async stream(launch: CliLaunch | null): Promise<CliExit | null> {
    const { limits } = this.plan!;
    const session = this.session!;
    const child = launch === null ? session.child! : session.spawn(launch);
    traceMark('spawned');
    // A failure to load surfaces when the CLI opens its MCP session (the broker answers 500).
    if (launch !== null) void this.deps.broker.then((broker) => broker.prepareSessions?.()).catch(() => undefined);
    const resultSeen = new Promise<null>((resolve) => (this.resultSeen = () => resolve(null)));
    if (this.plan!.warm) child.sendTurn(this.input.prompt);
    this.turnTimer = setTimeout(() => {
      this.abortReason ??= `aborted: the turn exceeded ${Math.round(limits.turnTimeoutMs / 1000)} s (turnTimeoutMinutes in settings.json sets this bound)`;
      this.interruptThenKill();
    }, limits.turnTimeoutMs);
    this.idleWatch = new IdleWatch(limits.idleTimeoutMs, () => this.toolUses.size > 0, (reason) => {
      this.abortReason ??= `aborted: ${reason}`;
      this.interruptThenKill();
    });
    this.idleWatch.touch();
    // A stop that raced the spawn.
    if (this.stopRequested) child.interrupt();
    return this.plan!.warm ? Promise.race([resultSeen, child.exited]) : child.exited;
  }

  private onChunk(messages: readonly CliMessage[], expected: { sessionId: string; version: string }): void {
    this.idleWatch?.touch();
    try {
      this.journal.batch(() => {
        // After an abort nothing more the child says is recorded as part of the turn.
        for (const message of messages) if (this.abortReason === null) this.onMessage(message, expected);
        if (this.abortReason === null) this.deltas.afterChunk();
      });
    } catch (error) {
      // A journal failure must end the turn, not leave it running unseen.
      this.abort(`aborted: could not record the turn (${describeError(error)})`);
    }
  }

  private onMessage(message: CliMessage, expected: { sessionId: string; version: string }): void {
    const journal = this.journal;
    switch (message.kind) {
      case 'init': {
        traceMark('cli-init');
        const problem = checkInit(message, { ...expected, tools: this.expectedTools });
        if (problem !== null) this.abort(`aborted: ${problem}`);
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
      case 'tool_use': {
        const tool = message.name.startsWith('mcp__ward__') ? message.name.slice('mcp__ward__'.length) : message.name;
        this.toolUses.set(message.toolUseId, { tool, startedAt: performance.now() });
        this.reportedToolUses.add(message.toolUseId);
        journal.emit('tool_call', { toolUseId: message.toolUseId, tool, arguments: boundedArguments(message.input, (text) => journal.redact(text)) });
        return;
      }
      case 'tool_result': {
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
        return;
      }
      case 'result':
        traceMark('cli-result');
        this.result = message;
        this.resultSeen?.();
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
        this.lastDiagnostic = journal.redact(message.detail);
        journal.emit('diagnostic', { source: 'cli_stdout', reason: message.reason, detail: this.lastDiagnostic, bytes: message.bytes });
        return;
      case 'ignored':
        return;
    }
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

  /** R5: success only from a terminal result with subtype "success" and is_error false; R8 for calls in flight. */
  private decide(exit: CliExit | null): Outcome {
    const inFlight = this.brokerInFlight.size;
    let exitNote: string;
    if (exit === null) exitNote = 'the CLI ended the turn without a result';
    else if (exit.spawnError !== null) exitNote = `the CLI could not be started: ${exit.spawnError}`;
    else {
      const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
      const said = firstLine(this.journal.redact(exit.stderrTail)) ?? this.lastDiagnostic;
      exitNote = `the CLI ${how} without a result${said === null ? '' : `: ${said}`}`;
    }
    if (this.stopRequested) return { state: 'stopped', reason: this.stopReason };
    if (this.abortReason !== null) return { state: 'failed', reason: this.abortReason };
    const result = this.result;
    if (result !== null) {
      if (result.subtype === 'success' && !result.isError) return { state: 'succeeded', reason: null };
      if (result.errors.some((error) => error.includes(NO_CONVERSATION))) {
        return {
          state: 'failed',
          reason: "the CLI's native transcript for this conversation is missing (No conversation found); Ward never starts a new conversation silently: start a new conversation with --new",
        };
      }
      // The CLI's errors and text can quote the provider, which may echo the key.
      const detail = this.journal.redact(result.errors.length > 0 ? result.errors.join('; ') : (result.text ?? 'no detail'));
      const what = result.subtype === 'success' ? 'the CLI ended the turn with an error' : `the CLI reported ${result.subtype}`;
      return { state: 'failed', reason: `${what}: ${detail}`.slice(0, 1000) };
    }
    if (inFlight > 0) return { state: 'uncertain', reason: `${exitNote}; ${inFlight} tool call(s) were in flight and their effect is unknown` };
    return { state: 'failed', reason: exitNote.slice(0, 1000) };
  }

  /**
   * Nothing Ward started for this run outlives it, but a warm session kept for the next turn:
   * a new question is withdrawn, then the CLI's folder with the capability goes as soon as the
   * child is gone, not after the drain (B2); then the capabilities, then the drain (B1, B7).
   */
  private async release(): Promise<void> {
    clearTimeout(this.turnTimer);
    this.idleWatch?.stop();
    clearTimeout(this.graceTimer);
    this.deltas.close();
    // An open permission question is withdrawn: nobody waits for an answer to a finished run.
    this.permissions?.close();
    this.elicitations?.close();
    const session = this.session;
    if (session === undefined) return;
    if (this.staysWarm(session)) {
      session.unbind();
      this.warm!.keep(warmKey(this.input.namespace, this.input.conversationId), session, this.plan!.limits.warmSessionMs);
      return;
    }
    // Still bound: the broker's drained outcomes reach this turn's journal.
    await session.close();
    session.unbind();
  }

  /** A warm session outlives its turn only when the CLI finished the turn cleanly and nothing it asked for still runs. */
  private staysWarm(session: CliSession): boolean {
    return (
      this.plan?.warm === true &&
      this.result !== null &&
      this.abortReason === null &&
      session.usable &&
      this.brokerInFlight.size === 0 &&
      (session.registration?.inFlight() ?? 0) === 0
    );
  }

  /** What the CLI never reported: the native session, streamed text, tool results, calls drained after a stop. */
  private recordUnreported(): void {
    const { store, conversationId } = this.input;
    try {
      // The session counts as started only once the CLI has written it (a child killed early may not have).
      if (nativeTranscriptExists(claudeConfigDir(this.deps.home, this.input.namespace, conversationId), store.conversations.get(conversationId).cliSessionId)) {
        store.conversations.markSessionStarted(conversationId);
      }
      // Text streamed before the turn ended stays, even without its final assistant_text.
      if (this.abortReason === null) this.deltas.finish();
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
    } catch {
      // the journal is failing; settle still records the run state
    }
  }

  /** Moves the run to its final state and journals run_finished (state first: it is what admission reads). */
  private settle(wanted: Outcome): Outcome {
    const { store, runId } = this.input;
    let final = wanted;
    const current = store.runs.get(runId).state;
    if (current === 'stopping' && (final.state === 'succeeded' || final.state === 'failed') && this.stopRequested) final = { state: 'stopped', reason: this.stopReason };
    if (current === 'admitted' && final.state === 'stopped') store.runs.transition(runId, 'stopping', this.stopReason);
    if (current === 'admitted' && final.state === 'succeeded') final = { state: 'failed', reason: final.reason };
    try {
      store.runs.transition(runId, final.state, final.reason);
    } catch (error) {
      final = { state: store.runs.get(runId).state, reason: describeError(error) };
    }
    this.state = 'done';
    this.journal.emit('run_finished', { state: final.state, reason: final.reason, anchored: this.input.store.anchors.keyAtHand });
    return final;
  }
}
