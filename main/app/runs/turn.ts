/**
 * One turn = one admitted run = one pinned-CLI child. A Turn holds that turn's state and runs
 * its steps in order:
 *   prepare   — journal run_started, check the pin (R1) and the policy (P5), read the credential
 *   openTools — permissions (P1–P4), the run's upstreams (B3), the broker capability (B1)
 *   launch    — private run folder with mcp.json (B2), argv and allowlisted env (R2, R3), sandbox
 *   stream    — stream-json → journal, init check (R3), turn timeout
 *   finish    — kill the group, remove the folder, close the capability and drain (B7), record
 *               what the CLI never reported, settle the run state (R5, R8)
 * Every event is committed to the journal before any subscriber hears of it.
 */
import fs from 'node:fs';
import { describeError } from '../../base/errors.js';
import { traceMark } from '../../base/trace.js';
import { parseAgentSpec, toolRoute, type AgentSpec } from '../../agents/spec.js';
import { openRunTools, type RunTools } from '../../agents/run-tools.js';
import type { ConnectionManager } from '../../connections/index.js';
import type { RunBinding, RunRegistration } from '../../broker/types.js';
import type { GatewayExchange, GatewayRegistration, ProviderRoute } from '../../gateway/gateway.js';
import type { Namespace } from '../../namespaces/namespace.js';
import { PERMISSION_DECISION_EVENT } from '../../permissions/audit.js';
import { GrantStore } from '../../permissions/grant-store.js';
import type { Rule } from '../../permissions/grants.js';
import { pinnedToolRules } from '../../permissions/native-tools.js';
import type { Prompter } from '../../permissions/prompter.js';
import { DEFAULT_PROMPT_TIMEOUT_MS, looksLikeSecretName, RunPermissions } from '../../permissions/run-permissions.js';
import { RunElicitations } from '../../permissions/elicitations.js';
import type { Elicitor } from '../../upstreams/elicitation.js';
import { assertConnectionAllowed, modelAllowed, policyGate, type AdminPolicy } from '../../policy/policy.js';
import { resolveModelProfile, type ModelCredential, type ModelProfile } from '../../providers/model-profile.js';
import type { ProviderAccess } from './provider-access.js';
import { checkReadiness } from './readiness.js';
import { buildCliArgs, mcpToolName } from '../../runner/argv.js';
import { CliProcess, type CliExit } from '../../runner/child.js';
import { buildChildEnv } from '../../runner/env.js';
import type { CliLaunch } from '../../runner/child.js';
import { checkInit } from '../../runner/init-check.js';
import type { PinLocation, PinnedCli } from '../../runner/pin.js';
import { createRunDir, type RunDir } from '../../runner/run-dir.js';
import { programFolders, type SandboxEngine, type SandboxStatus, type SandboxedLaunch } from '../../sandbox/engine.js';
import { sandboxGrants, wardPrivatePaths } from '../../sandbox/files.js';
import type { CliMessage, ResultMessage } from '../../runner/stream-parser.js';
import { TextDeltaCoalescer } from '../../runner/text-deltas.js';
import { adoptTranscript, nativeTranscriptExists } from '../../runner/transcript.js';
import type { Conversation } from '../../store/conversations.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import type { RunState } from '../../store/runs.js';
import type { PinnedToolRoute } from '../../upstreams/types.js';
import type { UpstreamOptions } from '../../upstreams/upstreams.js';
import { IdleWatch } from './idle-watch.js';
import type { RunLimits } from '../run-limits.js';
import { boundedArguments, firstLine, resultPreview, truncateText, MAX_TEXT_EVENT_CHARS } from './event-bounds.js';
import { TurnJournal } from './turn-journal.js';
import { claudeConfigDir, conversationWorkspace, sharedClaudeConfigDir } from './workspace.js';

/** What every turn of one Ward process shares (wired once by the composition root). */
export interface TurnDeps {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly policy: AdminPolicy | null;
  /** Still starting when the turn is admitted: awaited only where the turn registers with it. */
  readonly broker: Promise<{ register(binding: RunBinding): RunRegistration }>;
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
}

export interface Outcome {
  readonly state: RunState;
  readonly reason: string | null;
}

/** What prepare() settles before anything is started for the turn. */
interface Plan {
  readonly conversation: Conversation;
  readonly agentName: string;
  readonly spec: AgentSpec;
  readonly profile: ModelProfile;
  readonly resume: boolean;
  readonly workspace: string;
  readonly configDir: string;
  readonly pinned: PinnedCli;
  readonly access: ProviderAccess;
  readonly routes: readonly PinnedToolRoute[];
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
  child: CliProcess | undefined;
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
  private upstreams: RunTools | undefined;
  private registration: RunRegistration | undefined;
  private gatewayRoute: GatewayRegistration | undefined;
  private sandboxed: SandboxedLaunch | null = null;
  private runDir: RunDir | undefined;
  private expectedTools: readonly string[] = [];
  private result: ResultMessage | null = null;
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
      await this.openTools(plan);
      const exit = await this.stream(await this.launch(plan));
      traceMark('cli-exited');
      outcome = this.decide(exit);
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
    const conversation = store.conversations.get(input.conversationId);
    const agentVersion = store.agents.getById(conversation.agentId, conversation.agentVersion);
    const spec = parseAgentSpec(agentVersion.spec);
    const profile = resolveModelProfile(deps.home, ns, spec.modelProfile, deps.env);
    const configDir = claudeConfigDir(deps.home, ns, conversation.id);
    // A conversation from before each had its own CLI state takes its transcript along.
    adoptTranscript(sharedClaudeConfigDir(deps.home, ns), configDir, conversation.cliSessionId);
    // Resume once the CLI persisted the session; a confirmed session whose transcript is gone
    // still resumes, so the CLI's "No conversation found" fails the turn visibly (R4).
    const resume = conversation.sessionStarted || nativeTranscriptExists(configDir, conversation.cliSessionId);
    const workspace = conversationWorkspace(deps.home, ns, conversation);
    this.journal.emit('run_started', {
      requestId: input.requestId,
      agent: agentVersion.agentName,
      agentVersion: agentVersion.version,
      model: profile.model,
      session: resume ? 'resume' : 'new',
      workspace,
      // The audit trail says whether the OS sandbox confined this turn (probed once per process).
      sandboxed: deps.sandboxStatus.confined,
    });
    this.journal.emit('user_prompt', { text: truncateText(input.prompt) });
    traceMark('run-started');

    const { pinned, access } = await checkReadiness(deps, ns, spec, profile, (value) => this.journal.addSecret(value));
    traceMark('prepared');
    this.checkNotStopped();
    return { conversation, agentName: agentVersion.agentName, spec, profile, resume, workspace, configDir, pinned, access, routes: spec.tools.map(toolRoute) };
  }

  /** Permissions, the run's upstreams and the broker capability; refuses the run if a pinned tool is gone (B3). */
  private async openTools(plan: Plan): Promise<void> {
    const { deps, input } = this;
    const { store, namespace: ns } = input;
    this.permissions = new RunPermissions({
      baseDir: plan.workspace,
      rules: [...pinnedToolRules(plan.routes), ...input.rules],
      gate: policyGate(deps.policy),
      grants: new GrantStore(store.db),
      conversationId: input.conversationId,
      agentId: plan.conversation.agentId,
      agentName: plan.agentName,
      namespace: ns.name,
      routes: plan.routes,
      runId: input.runId,
      prompter: deps.prompter,
      promptTimeoutMs: deps.promptTimeoutMs,
      // The value, reason and summary quote what the model asked for, which may hold a secret of this turn.
      audit: (record) => {
        const redact = (text: string) => this.journal.redact(text);
        this.journal.emit(PERMISSION_DECISION_EVENT, {
          ...record,
          value: record.value === null ? null : redact(record.value),
          argumentsSummary: redact(record.argumentsSummary),
          reason: redact(record.reason),
        });
      },
    });
    const permissions = this.permissions;
    const elicitations = this.openElicitations(plan);
    const elicit = (server: string) => elicitations.for(server);
    this.upstreams = await openRunTools(plan.spec, {
      env: deps.env,
      ...(deps.upstreamOptions === undefined ? {} : { upstreamOptions: deps.upstreamOptions }),
      openConnections: () => deps.openConnections(ns, (value) => this.journal.addSecret(value), elicit),
      elicit,
      agentLabel: `agent ${plan.agentName}@${plan.conversation.agentVersion}`,
      namespace: ns,
      checkConnection: (name, server) => assertConnectionAllowed(deps.policy, name, server),
    });
    const [broker, gateway] = await Promise.all([deps.broker, deps.gateway]);
    traceMark('services-awaited');
    this.registration = broker.register({
      runId: input.runId,
      tools: plan.routes,
      upstreams: this.upstreams,
      isAcceptingCalls: () => this.state === 'running',
      authorizeToolCall: (tool, callArgs) => permissions.authorizeToolCall(tool, callArgs),
      approve: (request) => permissions.approve(request),
      onEvent: (event) => {
        if (event.kind === 'tool_call_started') {
          this.brokerInFlight.add(event.callId);
          if (event.toolUseId !== null) this.cliNamesToolUses = true;
        } else if (event.kind === 'tool_call_finished') {
          this.brokerInFlight.delete(event.callId);
          this.finished.push({ toolUseId: event.toolUseId, tool: event.tool, ok: event.ok, errorCode: event.errorCode, bytes: event.bytes, durationMs: event.durationMs });
        } else this.journal.emit('tool_refused', { tool: event.tool, reason: this.journal.redact(event.reason).slice(0, 500) });
      },
    });
    this.journal.addSecret(this.registration.capability);
    // G1, G3: the real credential stays here; the child gets the gateway and a run capability.
    this.gatewayRoute = gateway.register({
      runId: input.runId,
      baseUrl: plan.profile.baseUrl,
      credential: () => plan.access.credential(),
      ...(plan.access.refresh === undefined ? {} : { refreshCredential: () => plan.access.refresh!() }),
      onExchange: (exchange) => this.onModelCall(exchange),
      modelRefusal: (model) => (modelAllowed(deps.policy, model) ? null : `model ${model} is not allowed by ${deps.policy!.reason}`),
    });
    this.journal.addSecret(this.gatewayRoute.capability);
    traceMark('tools-open');
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

  /** The run folder, argv, environment and sandbox of the child; marks the run running. */
  private async launch(plan: Plan): Promise<{ launch: CliLaunch; expected: { sessionId: string; version: string } }> {
    const { deps, input } = this;
    const registration = this.registration!;
    const gateway = this.gatewayRoute!;
    const permissions = this.permissions!;
    traceMark('launch');
    this.runDir = createRunDir({ brokerUrl: registration.url, capability: registration.capability, instructions: plan.spec.instructions, tmpRoot: deps.tmpRoot });
    fs.mkdirSync(plan.workspace, { recursive: true, mode: 0o700 });
    fs.mkdirSync(plan.configDir, { recursive: true, mode: 0o700 });
    const cliPermissions = permissions.cliOptions();
    const args = buildCliArgs({
      sessionId: plan.conversation.cliSessionId,
      resume: plan.resume,
      mcpConfigPath: this.runDir.mcpConfigPath,
      instructionsPath: this.runDir.instructionsPath,
      model: plan.profile.model,
      pinnedTools: plan.routes.map((route) => route.exposedName),
      nativeTools: cliPermissions.tools,
      allowedRules: cliPermissions.allowedTools,
      disallowedRules: cliPermissions.disallowedTools,
      askTools: cliPermissions.askTools,
    });
    // S4: no credential in the child: the gateway's URL and this run's capability in the variable of the credential's mode.
    const granted = await permissions.grantedEnv(deps.env);
    for (const [name, value] of Object.entries(granted)) if (looksLikeSecretName(name)) this.journal.addSecret(value);
    const env = buildChildEnv({ inherited: deps.env, model: { baseUrl: gateway.url, capability: gateway.capability, mode: plan.access.childMode }, configDir: plan.configDir, granted });
    this.expectedTools = [...plan.routes.map((route) => mcpToolName(route.exposedName)), ...cliPermissions.tools];
    const command = { binary: plan.pinned.path, args, env, cwd: plan.workspace };
    this.sandboxed = await deps.sandbox.launch({
      command,
      files: {
        programs: programFolders(plan.pinned.path),
        readOnly: [this.runDir.dir],
        writable: [plan.workspace, plan.configDir],
        grants: sandboxGrants(permissions.currentRules()),
        hidden: wardPrivatePaths(deps.home, deps.env),
      },
      // S3: the broker and the gateway (loopback, this process) and the run's net grants; any other host is decided as it is tried.
      allowedHosts: [new URL(registration.url).host, new URL(gateway.url).host, ...permissions.sandboxHosts()],
      decideHost: async ({ host, port }) => {
        const decision = await permissions.decideHost(host, port);
        return decision.allowed ? { allow: true } : { allow: false, reason: `Ward denied ${host}:${port}: ${decision.reason}` };
      },
    });
    traceMark('sandbox-ready');
    this.checkNotStopped();
    input.store.runs.transition(input.runId, 'running');
    this.state = 'running';
    permissions.setChildReach(this.sandboxed?.reachable);
    const launch: CliLaunch = { ...(this.sandboxed ?? command), prompt: input.prompt, maxLineBytes: deps.maxLineBytes };
    return { launch, expected: { sessionId: plan.conversation.cliSessionId, version: plan.pinned.version } };
  }

  /** Spawns the child and journals what it says until it exits (or the turn times out). */
  private async stream({ launch, expected }: Awaited<ReturnType<Turn['launch']>>): Promise<CliExit> {
    // Read before the spawn: a malformed settings.json fails the turn with nothing started.
    const limits = this.deps.limits();
    this.child = new CliProcess(launch, (messages) => this.onChunk(messages, expected));
    traceMark('spawned');
    if (this.child.pid !== undefined) this.runDir!.recordChild(this.child.pid);
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
    if (this.stopRequested) this.child.interrupt();
    return this.child.exited;
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
  private decide(exit: CliExit): Outcome {
    const inFlight = this.brokerInFlight.size;
    let exitNote: string;
    if (exit.spawnError !== null) exitNote = `the CLI could not be started: ${exit.spawnError}`;
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
   * Nothing Ward started for this run outlives it: the folder with the capability goes as soon
   * as the child is gone, not after the drain (B2); then the capability, then the drain (B1, B7).
   */
  private async release(): Promise<void> {
    clearTimeout(this.turnTimer);
    this.idleWatch?.stop();
    clearTimeout(this.graceTimer);
    this.child?.killGroup();
    this.runDir?.remove();
    this.deltas.close();
    // An open permission question is withdrawn: nobody waits for an answer to a finished run.
    this.permissions?.close();
    this.elicitations?.close();
    this.gatewayRoute?.close();
    this.sandboxed?.release();
    try {
      await this.registration?.close();
    } catch {
      // close() only fails if the broker itself is broken; the run still settles.
    }
    await this.upstreams?.close().catch(() => undefined);
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
    this.journal.emit('run_finished', { state: final.state, reason: final.reason });
    return final;
  }
}
