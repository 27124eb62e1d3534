/**
 * RunService: one conversation turn = one admitted run = one pinned-CLI child. Electron-free;
 * the `ward run` command and the desktop UI both drive it.
 *
 * Order of a turn: admission (R7) → journal run_started → pin check (R1) → broker capability
 * (B1) → private run folder with mcp.json (B2) → spawn (R2, R3) → stream-json → journal → in
 * `finally`: kill the process group, close the capability and drain (B7), remove the folder,
 * settle the run state and journal run_finished. Every event is committed to the journal before
 * any subscriber hears of it (store.journal.subscribe).
 */
import fs from 'node:fs';
import path from 'node:path';
import { WardError, describeError } from './errors.js';
import type { WardCore } from './ward-core.js';
import { resolveModelCredential, resolveModelProfile } from './run-provider.js';
import { DEFAULT_AGENT, DEFAULT_AGENT_SPEC, parseAgentSpec, toolRoute, toolSource, type AgentSpec } from '../agents/spec.js';
import { openRunTools } from '../agents/run-tools.js';
import { openConnections, type ConnectionManager } from '../connections/index.js';
import type { PinnedToolRoute, RunBinding, RunRegistration, UpstreamCaller } from '../broker/types.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { buildCliArgs, mcpToolName } from '../runner/argv.js';
import { CliProcess } from '../runner/child.js';
import { buildChildEnv, type ModelCredential } from '../runner/env.js';
import { checkInit } from '../runner/init-check.js';
import { assertSandbox, sandboxGrants, sandboxLaunch, sandboxState, type SandboxOptions } from '../runner/sandbox.js';
import { cliVerificationCache, verifyPinnedCli, type PinLocation } from '../runner/pin.js';
import { createRunDir, sweepStaleRunDirs, type RunDir } from '../runner/run-dir.js';
import { nativeTranscriptExists } from '../runner/transcript.js';
import type { CliMessage, ResultMessage } from '../runner/stream-parser.js';
import { TextDeltaCoalescer } from '../runner/text-deltas.js';
import type { Conversation } from '../store/conversations.js';
import type { EventInput } from '../store/journal.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import { fingerprintInput, isProcessAlive, newRequestId, type Run, type RunState } from '../store/runs.js';
import type { UpstreamOptions } from '../upstreams/upstreams.js';
import { PERMISSION_DECISION_EVENT } from '../permissions/audit.js';
import { GrantStore } from '../permissions/grant-store.js';
import type { Rule } from '../permissions/grants.js';
import { noOnePrompter, type Prompter } from '../permissions/prompter.js';
import { pinnedToolRules } from '../permissions/native-tools.js';
import { RunPermissions } from '../permissions/run-permissions.js';
import { assertCliVersionAllowed, assertConnectionAllowed, assertProviderAllowed, assertRulesAllowed, loadPolicy, type AdminPolicy } from '../policy/policy.js';

/** What the service needs of the broker (main/broker/broker.ts implements it). */
export interface BrokerPort {
  register(binding: RunBinding): RunRegistration;
}

export interface UpstreamSession extends UpstreamCaller {
  close(): Promise<void>;
}

export interface RunServiceOptions {
  readonly core: WardCore;
  readonly broker: BrokerPort;
  /** Ward's own environment: the child's allowlist, the model profile and credential come from it. */
  readonly env?: NodeJS.ProcessEnv;
  /** SIGINT → SIGKILL of the process group after this long (R6, default 5 s). */
  readonly stopGraceMs?: number;
  /** A turn is stopped after this long whatever happens (default 30 min). */
  readonly turnTimeoutMs?: number;
  /** Test seam for the pin check; production uses the committed pin. */
  readonly pin?: PinLocation;
  readonly maxLineBytes?: number;
  readonly upstreamOptions?: UpstreamOptions;
  /** Where run folders are made (default os.tmpdir()). */
  readonly tmpRoot?: string;
  /** Admin policy (P5); omitted = loaded from its system location (or WARD_POLICY) in `env`. */
  readonly policy?: AdminPolicy | null;
  /** Who answers permission questions (P3); default: no one, so anything not granted is denied. */
  readonly prompter?: Prompter;
  readonly promptTimeoutMs?: number;
  /** The model credential source (default: Ward's environment; `ward run` passes the keychain-backed one). */
  readonly resolveCredential?: (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> | ModelCredential;
  /** The namespace's connections for a run that pins connection tools (default: openConnections with the configured secret store). */
  readonly openConnections?: (ns: Namespace) => ConnectionManager;
  /** The OS sandbox for the child (default: WARD_SANDBOX in `env`, auto; bwrap from its PATH). */
  readonly sandbox?: SandboxOptions;
}

export interface StartTurnInput {
  readonly namespace: Namespace;
  /** An existing conversation (id or unique prefix); omit to start a new one. */
  readonly conversationId?: string;
  /** Agent name for a new conversation (default "default"); an existing one keeps its version. */
  readonly agent?: string;
  readonly prompt: string;
  readonly requestId?: string;
  /** A folder the person names as the conversation's workspace; default inside the namespace's data. */
  readonly workspace?: string;
  /** Deno-style rules for this turn (`ward run --allow-…`), parsed with parsePermissionFlags. */
  readonly permissions?: readonly Rule[];
}

export interface RunOutcome {
  readonly runId: string;
  readonly conversationId: string;
  readonly state: RunState;
  readonly reason: string | null;
}

export interface RunHandle {
  readonly runId: string;
  readonly conversationId: string;
  /** True when the request id matched an admitted run and no new child was started (R7). */
  readonly attached: boolean;
  /** Journal cursor just before this run's first event: subscribe from here to see the whole turn. */
  readonly cursor: number;
  readonly done: Promise<RunOutcome>;
  /** The CLI child's pid while it runs (for process checks). */
  childPid(): number | undefined;
}

export const MAX_PROMPT_BYTES = 1024 * 1024;
const MAX_TEXT_EVENT_CHARS = 256 * 1024;
const MAX_ARGUMENT_EVENT_BYTES = 64 * 1024;
/** How much of a tool's result the timeline shows (the model got all of it). */
export const TOOL_RESULT_PREVIEW_BYTES = 2 * 1024;
const TERMINAL: readonly RunState[] = ['stopped', 'succeeded', 'failed'];
/** How often a run owned by another Ward process is polled when attaching to it. */
const FOREIGN_POLL_MS = 250;

interface ActiveRun {
  readonly handle: RunHandle;
  readonly store: NamespaceStore;
  state: 'admitted' | 'running' | 'stopping' | 'done';
  child: CliProcess | undefined;
  stopRequested: boolean;
  stopReason: string;
  graceTimer: NodeJS.Timeout | undefined;
  /** Set by a failed init check or the turn timeout: the turn fails with this reason. */
  abortReason: string | null;
}

export function conversationWorkspace(home: string, ns: Namespace, conversation: Conversation): string {
  return conversation.workspace ?? path.join(namespaceDir(home, ns), 'workspaces', conversation.id);
}

export function claudeConfigDir(home: string, ns: Namespace): string {
  return path.join(namespaceDir(home, ns), 'claude');
}

export class RunService {
  private readonly active = new Map<string, ActiveRun>();
  private readonly env: NodeJS.ProcessEnv;
  private readonly stopGraceMs: number;
  private readonly turnTimeoutMs: number;
  private readonly policy: AdminPolicy | null;

  constructor(private readonly options: RunServiceOptions) {
    this.env = options.env ?? process.env;
    this.policy = options.policy !== undefined ? options.policy : loadPolicy(this.env);
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
    this.turnTimeoutMs = options.turnTimeoutMs ?? 30 * 60_000;
    // Folders (with a capability inside) left by a Ward process that was killed.
    sweepStaleRunDirs(isProcessAlive, options.tmpRoot);
  }

  /** The agent version a new conversation uses; the built-in "default" agent is published on first use. */
  resolveAgent(store: NamespaceStore, name: string = DEFAULT_AGENT): { agentId: string; version: number; spec: AgentSpec } {
    let version = store.agents.find(name);
    if (version === undefined && name === DEFAULT_AGENT) version = store.agents.publish(DEFAULT_AGENT, DEFAULT_AGENT_SPEC);
    if (version === undefined) throw new WardError('not_found', `no agent named ${name}; create it with "ward agents create ${name} ..."`);
    return { agentId: version.agentId, version: version.version, spec: parseAgentSpec(version.spec) };
  }

  /**
   * Admits and starts a turn. Returns once the run is admitted (or attached); the turn proceeds
   * in the background and `done` settles with its outcome.
   */
  startTurn(input: StartTurnInput): RunHandle {
    if (typeof input.prompt !== 'string' || input.prompt.trim() === '') throw new WardError('usage', 'the prompt is empty');
    if (Buffer.byteLength(input.prompt) > MAX_PROMPT_BYTES) throw new WardError('usage', `the prompt exceeds ${MAX_PROMPT_BYTES} bytes`);
    const store = this.options.core.store(input.namespace, { mustExist: true });
    const requestId = input.requestId ?? newRequestId();
    if (!/^[A-Za-z0-9._:-]{1,128}$/.test(requestId)) throw new WardError('usage', 'a request id is 1–128 of A-Z a-z 0-9 . _ : -');
    const workspace = input.workspace === undefined ? undefined : this.checkWorkspace(input.workspace);
    const rules = input.permissions ?? [];
    assertRulesAllowed(this.policy, rules);
    // WARD_SANDBOX=require without a working sandbox: refused before admission, nothing spawned.
    assertSandbox(sandboxState(this.env, this.options.sandbox));
    if (this.policy?.namespace != null && this.policy.namespace !== input.namespace.name) {
      throw new WardError('policy_refused', `namespace ${input.namespace.name}: refused by ${this.policy.reason}, which fixes the namespace to ${this.policy.namespace}`);
    }

    let conversation: Conversation;
    if (input.conversationId !== undefined) {
      conversation = store.conversations.resolve(input.conversationId);
      const agent = store.agents.getById(conversation.agentId, conversation.agentVersion);
      if (input.agent !== undefined && input.agent !== agent.agentName) {
        throw new WardError('usage', `conversation ${conversation.id} uses agent ${agent.agentName}; start a new conversation for agent ${input.agent}`);
      }
      if (workspace !== undefined && workspace !== conversationWorkspace(this.options.core.home, input.namespace, conversation)) {
        throw new WardError('usage', `conversation ${conversation.id} has its workspace at ${conversationWorkspace(this.options.core.home, input.namespace, conversation)}; a conversation keeps one workspace`);
      }
    } else {
      // The same request id for a new conversation attaches to the conversation it made before.
      const earlier = input.requestId === undefined ? undefined : this.findConversationByRequest(store, requestId);
      if (earlier !== undefined) conversation = earlier;
      else {
        const agent = this.resolveAgent(store, input.agent);
        conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: titleOf(input.prompt), workspace: workspace ?? null });
      }
    }

    const fingerprint = fingerprintInput({ prompt: input.prompt, agentId: conversation.agentId, agentVersion: conversation.agentVersion });
    const cursor = store.journal.lastSeq(conversation.id);
    const admission = store.runs.admit(conversation.id, requestId, fingerprint);
    if (admission.attached) return this.attach(store, admission.run);

    const active: ActiveRun = {
      handle: undefined as unknown as RunHandle,
      store,
      state: 'admitted',
      child: undefined,
      stopRequested: false,
      stopReason: '',
      graceTimer: undefined,
      abortReason: null,
    };
    const runId = admission.run.id;
    const done = Promise.resolve().then(() => this.execute(active, input.namespace, conversation.id, runId, requestId, input.prompt, rules));
    (active as { handle: RunHandle }).handle = {
      runId,
      conversationId: conversation.id,
      attached: false,
      cursor,
      done,
      childPid: () => active.child?.pid,
    };
    this.active.set(runId, active);
    void done.finally(() => this.active.delete(runId));
    return active.handle;
  }

  /**
   * R6: interrupt the child, SIGKILL its process group after the grace period, wait for tool
   * calls to drain, then record `stopped`. Calling it again escalates at once.
   */
  stop(runId: string, reason = 'stopped by the user'): Promise<RunOutcome> {
    const active = this.active.get(runId);
    if (active === undefined) throw new WardError('not_found', `run ${runId} is not running in this Ward process`);
    if (active.stopRequested) {
      active.child?.killGroup();
      return active.handle.done;
    }
    this.requestStop(active, reason);
    return active.handle.done;
  }

  /** Stops every run this service started (Ward is exiting) and waits for them. */
  async stopAll(reason = 'Ward is shutting down'): Promise<void> {
    const runs = [...this.active.values()].filter((run) => !run.handle.attached);
    for (const run of runs) if (!run.stopRequested) this.requestStop(run, reason);
    await Promise.allSettled(runs.map((run) => run.handle.done));
  }

  private requestStop(active: ActiveRun, reason: string): void {
    active.stopRequested = true;
    active.stopReason = reason;
    if (active.state === 'admitted' || active.state === 'running') {
      const { runId, conversationId } = active.handle;
      active.store.runs.transition(runId, 'stopping', reason);
      active.state = 'stopping';
      this.journal(active.store, conversationId, runId, [{ type: 'run_stopping', payload: { reason } }]);
    }
    active.child?.interrupt();
    active.graceTimer ??= setTimeout(() => active.child?.killGroup(), this.stopGraceMs);
  }

  private checkWorkspace(dir: string): string {
    const resolved = path.resolve(dir);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(resolved);
    } catch {
      throw new WardError('usage', `workspace ${resolved} does not exist; create the folder first`);
    }
    if (!stat.isDirectory()) throw new WardError('usage', `workspace ${resolved} is not a folder`);
    return resolved;
  }

  private findConversationByRequest(store: NamespaceStore, requestId: string): Conversation | undefined {
    const row = store.db.prepare<[string], { conversation_id: string }>('SELECT conversation_id FROM runs WHERE request_id = ? ORDER BY created_at LIMIT 1').get(requestId);
    return row === undefined ? undefined : store.conversations.get(row.conversation_id);
  }

  /** R7: the same request attaches to the run it admitted, here or in another Ward process. */
  private attach(store: NamespaceStore, run: Run): RunHandle {
    const local = this.active.get(run.id);
    if (local !== undefined) return { ...local.handle, attached: true };
    const first = store.db
      .prepare<[string, string], { seq: number }>('SELECT min(seq) AS seq FROM events WHERE conversation_id = ? AND run_id = ?')
      .get(run.conversationId, run.id);
    const cursor = Math.max(0, (first?.seq ?? store.journal.lastSeq(run.conversationId) + 1) - 1);
    const done = new Promise<RunOutcome>((resolve) => {
      const poll = () => {
        let now = store.runs.get(run.id);
        // The owning process died meanwhile: its run becomes uncertain now, not at the next start (R8).
        if (!TERMINAL.includes(now.state) && now.state !== 'uncertain' && !isProcessAlive(now.ownerPid, now.ownerIdentity)) {
          store.runs.markOrphansUncertain();
          now = store.runs.get(run.id);
        }
        if (TERMINAL.includes(now.state) || now.state === 'uncertain') resolve({ runId: now.id, conversationId: now.conversationId, state: now.state, reason: now.reason });
        else setTimeout(poll, FOREIGN_POLL_MS);
      };
      poll();
    });
    return { runId: run.id, conversationId: run.conversationId, attached: true, cursor, done, childPid: () => undefined };
  }

  private journal(store: NamespaceStore, conversationId: string, runId: string, events: readonly EventInput[]): void {
    store.journal.appendMany(
      conversationId,
      events.map((event) => ({ ...event, runId })),
    );
  }

  private async execute(active: ActiveRun, ns: Namespace, conversationId: string, runId: string, requestId: string, prompt: string, rules: readonly Rule[]): Promise<RunOutcome> {
    const { store } = active;
    const home = this.options.core.home;
    const secrets: string[] = [];
    const redact = (text: string): string => secrets.reduce((out, secret) => (secret.length >= 8 ? out.split(secret).join('[redacted]') : out), text);
    // While one stdout chunk is handled, events collect here and are committed in one transaction.
    let pending: EventInput[] | null = null;
    const emit = (type: string, payload: unknown) => {
      if (pending !== null) pending.push({ type, payload });
      else this.journal(store, conversationId, runId, [{ type, payload }]);
    };

    let registration: RunRegistration | undefined;
    let closePermissions = (): void => undefined;
    let upstreams: UpstreamSession | undefined;
    let runDir: RunDir | undefined;
    let turnTimer: NodeJS.Timeout | undefined;
    let result: ResultMessage | null = null;
    let lastDiagnostic: string | null = null;
    let exitNote = '';
    let inFlightAtDeath = 0;
    let outcome: { state: RunState; reason: string | null } = { state: 'failed', reason: 'the run ended before the CLI started' };
    // Broker bookkeeping: calls dispatched upstream and not finished; finished outcomes per tool.
    const brokerInFlight = new Set<string>();
    const finishedByTool = new Map<string, { ok: boolean; errorCode?: string; bytes: number; durationMs: number }[]>();
    const toolUses = new Map<string, { tool: string; startedAt: number }>();
    const deltas = new TextDeltaCoalescer({
      emit: (delta) => emit('assistant_delta', delta),
      redact,
      secrets: () => secrets,
      maxChars: MAX_TEXT_EVENT_CHARS,
      onError: (error) => {
        active.abortReason ??= `aborted: could not record the turn (${describeError(error)})`;
        active.child?.killGroup();
      },
    });

    try {
      const conversation = store.conversations.get(conversationId);
      const agentVersion = store.agents.getById(conversation.agentId, conversation.agentVersion);
      const spec = parseAgentSpec(agentVersion.spec);
      const profile = resolveModelProfile(home, ns, spec.modelProfile, this.env);
      // Resume once the CLI persisted the session; a confirmed session whose transcript is gone
      // still resumes, so the CLI's "No conversation found" fails the turn visibly (R4).
      const resume = conversation.sessionStarted || nativeTranscriptExists(claudeConfigDir(home, ns), conversation.cliSessionId);
      const workspace = conversationWorkspace(home, ns, conversation);
      emit('run_started', {
        requestId,
        agent: agentVersion.agentName,
        agentVersion: agentVersion.version,
        model: profile.model,
        session: resume ? 'resume' : 'new',
        workspace,
        // The audit trail says whether the OS sandbox confined this turn (sandboxState is probed once per process).
        sandboxed: sandboxState(this.env, this.options.sandbox).bwrap !== null,
      });
      emit('user_prompt', { text: truncateText(prompt) });

      const pinned = await verifyPinnedCli({ verifiedCacheFile: cliVerificationCache(this.options.core.home), ...this.options.pin });
      // P5: the admin policy pins the CLI version, the model provider and the connections.
      assertCliVersionAllowed(this.policy, pinned.version);
      assertProviderAllowed(this.policy, profile.baseUrl);
      for (const upstream of new Set([...Object.keys(spec.upstreams), ...spec.tools.map(toolSource)])) assertConnectionAllowed(this.policy, upstream);
      const credential = await (this.options.resolveCredential ?? resolveModelCredential)(ns, this.env);
      secrets.push(credential.value);
      if (active.stopRequested) throw new StopBeforeSpawn();

      const routes: PinnedToolRoute[] = spec.tools.map(toolRoute);
      const permissions = new RunPermissions({
        baseDir: workspace,
        rules: [...pinnedToolRules(routes), ...rules],
        policy: this.policy,
        grants: new GrantStore(store.db),
        conversationId,
        agentId: conversation.agentId,
        agentName: agentVersion.agentName,
        namespace: ns.name,
        routes,
        runId,
        prompter: this.options.prompter ?? noOnePrompter,
        promptTimeoutMs: this.options.promptTimeoutMs,
        audit: (record) => emit(PERMISSION_DECISION_EVENT, record),
      });
      closePermissions = () => permissions.close();
      const cliPermissions = permissions.cliOptions();
      // Refuses the run (nothing spawned) when a pinned connection tool is gone, off or changed (B3).
      upstreams = await openRunTools(spec, {
        env: this.env,
        ...(this.options.upstreamOptions === undefined ? {} : { upstreamOptions: this.options.upstreamOptions }),
        openConnections: () => (this.options.openConnections ?? ((namespace: Namespace) => openConnections(this.options.core, namespace)))(ns),
        agentLabel: `agent ${agentVersion.agentName}@${agentVersion.version}`,
      });
      registration = this.options.broker.register({
        runId,
        tools: routes,
        upstreams,
        isAcceptingCalls: () => active.state === 'running',
        authorizeToolCall: (tool, callArgs) => permissions.authorizeToolCall(tool, callArgs),
        approve: (request) => permissions.approve(request),
        onEvent: (event) => {
          if (event.kind === 'tool_call_started') brokerInFlight.add(event.callId);
          else if (event.kind === 'tool_call_finished') {
            brokerInFlight.delete(event.callId);
            const list = finishedByTool.get(event.tool) ?? [];
            list.push({ ok: event.ok, errorCode: event.errorCode, bytes: event.bytes, durationMs: event.durationMs });
            finishedByTool.set(event.tool, list);
          } else emit('tool_refused', { tool: event.tool, reason: redact(event.reason).slice(0, 500) });
        },
      });
      secrets.push(registration.capability);
      runDir = createRunDir({ brokerUrl: registration.url, capability: registration.capability, instructions: spec.instructions, tmpRoot: this.options.tmpRoot });
      fs.mkdirSync(workspace, { recursive: true, mode: 0o700 });
      const configDir = claudeConfigDir(home, ns);
      fs.mkdirSync(configDir, { recursive: true, mode: 0o700 });

      const args = buildCliArgs({
        sessionId: conversation.cliSessionId,
        resume,
        mcpConfigPath: runDir.mcpConfigPath,
        instructionsPath: runDir.instructionsPath,
        model: profile.model,
        pinnedTools: routes.map((route) => route.exposedName),
        nativeTools: cliPermissions.tools,
        allowedRules: cliPermissions.allowedTools,
        disallowedRules: cliPermissions.disallowedTools,
        askTools: cliPermissions.askTools,
      });
      const env = buildChildEnv({ inherited: this.env, baseUrl: profile.baseUrl, credential, configDir });
      const expectedTools = [...routes.map((route) => mcpToolName(route.exposedName)), ...cliPermissions.tools];

      if (active.stopRequested) throw new StopBeforeSpawn();
      store.runs.transition(runId, 'running');
      active.state = 'running';

      const onMessage = (message: CliMessage): void => {
        switch (message.kind) {
          case 'init': {
            const problem = checkInit(message, { sessionId: conversation.cliSessionId, tools: expectedTools });
            if (problem !== null) {
              active.abortReason = `aborted: ${problem}`;
              active.child?.killGroup();
              return;
            }
            return;
          }
          case 'text_delta':
            deltas.push(message.text);
            return;
          case 'assistant_text':
            deltas.complete();
            emit('assistant_text', { text: truncateText(redact(message.text)) });
            return;
          case 'tool_use': {
            const tool = message.name.startsWith('mcp__ward__') ? message.name.slice('mcp__ward__'.length) : message.name;
            toolUses.set(message.toolUseId, { tool, startedAt: performance.now() });
            emit('tool_call', { toolUseId: message.toolUseId, tool, arguments: boundedArguments(message.input, redact) });
            return;
          }
          case 'tool_result': {
            const use = toolUses.get(message.toolUseId);
            toolUses.delete(message.toolUseId);
            const tool = use?.tool ?? null;
            const broker = tool === null ? undefined : finishedByTool.get(tool)?.shift();
            emit('tool_result', {
              toolUseId: message.toolUseId,
              tool,
              ok: !message.isError && (broker?.ok ?? true),
              bytes: broker?.bytes ?? message.bytes,
              durationMs: Math.round(broker?.durationMs ?? (use === undefined ? 0 : performance.now() - use.startedAt)),
              errorCode: broker?.ok === false ? (broker.errorCode ?? 'error') : message.isError ? 'tool_error' : null,
              ...resultPreview(redact(message.text)),
            });
            return;
          }
          case 'result':
            result = message;
            emit('usage', {
              inputTokens: message.usage.inputTokens,
              outputTokens: message.usage.outputTokens,
              cacheReadTokens: message.usage.cacheReadTokens,
              cacheCreationTokens: message.usage.cacheCreationTokens,
              costUsd: message.costUsd,
            });
            return;
          case 'diagnostic':
            lastDiagnostic = redact(message.detail);
            emit('diagnostic', { source: 'cli_stdout', reason: message.reason, detail: lastDiagnostic, bytes: message.bytes });
            return;
          case 'ignored':
            return;
        }
      };

      const launch = sandboxLaunch(
        sandboxState(this.env, this.options.sandbox),
        { binary: pinned.path, args, env, cwd: workspace, prompt, maxLineBytes: this.options.maxLineBytes },
        { writable: [workspace, configDir], readOnly: [runDir.dir], grants: sandboxGrants(permissions.currentRules()) },
      );
      permissions.setChildReach(launch.reachable);
      active.child = new CliProcess(launch, (messages) => {
        pending = [];
        try {
          // After an abort nothing more the child says is recorded as part of the turn.
          for (const message of messages) if (active.abortReason === null) onMessage(message);
          if (active.abortReason === null) deltas.afterChunk();
          const events = pending;
          pending = null;
          this.journal(store, conversationId, runId, events);
        } catch (error) {
          pending = null;
          // A journal failure must end the turn, not leave it running unseen.
          active.abortReason ??= `aborted: could not record the turn (${describeError(error)})`;
          active.child?.killGroup();
        }
      });
      if (active.child.pid !== undefined) runDir.recordChild(active.child.pid);
      turnTimer = setTimeout(() => {
        active.abortReason ??= `aborted: the turn exceeded ${Math.round(this.turnTimeoutMs / 1000)} s`;
        active.child?.interrupt();
        active.graceTimer ??= setTimeout(() => active.child?.killGroup(), this.stopGraceMs);
      }, this.turnTimeoutMs);
      // A stop that raced the spawn.
      if (active.stopRequested) active.child.interrupt();

      const exit = await active.child.exited;
      inFlightAtDeath = brokerInFlight.size;
      if (exit.spawnError !== null) exitNote = `the CLI could not be started: ${exit.spawnError}`;
      else {
        const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
        const said = firstLine(redact(exit.stderrTail)) ?? lastDiagnostic;
        exitNote = `the CLI ${how} without a result${said === null ? '' : `: ${said}`}`;
      }
      outcome = decideOutcome(active, result, exitNote, inFlightAtDeath);
    } catch (error) {
      if (error instanceof StopBeforeSpawn) outcome = { state: 'stopped', reason: active.stopReason };
      else outcome = active.stopRequested ? { state: 'stopped', reason: active.stopReason } : { state: 'failed', reason: redact(describeError(error)).slice(0, 1000) };
    } finally {
      clearTimeout(turnTimer);
      clearTimeout(active.graceTimer);
      // Nothing Ward started for this run outlives it; the folder with the capability goes as
      // soon as the child is gone, not after the drain (B2).
      active.child?.killGroup();
      runDir?.remove();
      deltas.close();
      // An open permission question is withdrawn: nobody waits for an answer to a finished run.
      closePermissions();
      try {
        await registration?.close(); // capability gone first, then calls drain (B1, B7)
      } catch {
        // close() only fails if the broker itself is broken; the run still settles.
      }
      await upstreams?.close().catch(() => undefined);
      try {
        // The session counts as started only once the CLI has written it (a child killed early may not have).
        if (nativeTranscriptExists(claudeConfigDir(home, ns), store.conversations.get(conversationId).cliSessionId)) {
          store.conversations.markSessionStarted(conversationId);
        }
        // Text streamed before the turn ended stays, even without its final assistant_text.
        if (active.abortReason === null) deltas.finish();
        // Every tool_call gets a tool_result, even when the CLI died before printing one; the
        // model never saw it (delivered: false), but the upstream call may have had its effect.
        for (const [toolUseId, use] of toolUses) {
          const broker = finishedByTool.get(use.tool)?.shift();
          emit('tool_result', {
            toolUseId,
            tool: use.tool,
            ok: broker?.ok ?? false,
            bytes: broker?.bytes ?? 0,
            durationMs: Math.round(broker?.durationMs ?? performance.now() - use.startedAt),
            errorCode: broker === undefined ? 'no_result' : broker.ok ? null : (broker.errorCode ?? 'error'),
            delivered: false,
          });
        }
        // Calls that finished upstream after the CLI stopped waiting (a Stop): seen only after the drain.
        for (const [tool, finished] of finishedByTool) {
          for (const call of finished) emit('tool_drained', { tool, ok: call.ok, errorCode: call.ok ? null : (call.errorCode ?? 'error'), bytes: call.bytes, durationMs: Math.round(call.durationMs) });
        }
      } catch {
        // the journal is failing; settle still records the run state
      }
      outcome = this.settle(active, conversationId, runId, outcome);
    }
    return { runId, conversationId, ...outcome };
  }

  /** Moves the run to its final state and journals run_finished (state first: it is what admission reads). */
  private settle(active: ActiveRun, conversationId: string, runId: string, wanted: { state: RunState; reason: string | null }): { state: RunState; reason: string | null } {
    const { store } = active;
    let final = wanted;
    const current = store.runs.get(runId).state;
    if (current === 'stopping' && (final.state === 'succeeded' || final.state === 'failed') && active.stopRequested) final = { state: 'stopped', reason: active.stopReason };
    if (current === 'admitted' && final.state === 'stopped') {
      store.runs.transition(runId, 'stopping', active.stopReason);
    }
    if (current === 'admitted' && final.state === 'succeeded') final = { state: 'failed', reason: final.reason };
    try {
      store.runs.transition(runId, final.state, final.reason);
    } catch (error) {
      final = { state: store.runs.get(runId).state, reason: describeError(error) };
    }
    active.state = 'done';
    this.journal(store, conversationId, runId, [{ type: 'run_finished', payload: { state: final.state, reason: final.reason } }]);
    return final;
  }
}

class StopBeforeSpawn extends Error {}

const NO_CONVERSATION = 'No conversation found';

/** R5: success only from a terminal result with subtype "success" and is_error false. */
function decideOutcome(active: ActiveRun, result: ResultMessage | null, exitNote: string, inFlight: number): { state: RunState; reason: string | null } {
  if (active.stopRequested) return { state: 'stopped', reason: active.stopReason };
  if (active.abortReason !== null) return { state: 'failed', reason: active.abortReason };
  if (result !== null) {
    if (result.subtype === 'success' && !result.isError) return { state: 'succeeded', reason: null };
    if (result.errors.some((error) => error.includes(NO_CONVERSATION))) {
      return {
        state: 'failed',
        reason: "the CLI's native transcript for this conversation is missing (No conversation found); Ward never starts a new conversation silently: start a new conversation with --new",
      };
    }
    const detail = result.errors.length > 0 ? result.errors.join('; ') : (result.text ?? 'no detail');
    const what = result.subtype === 'success' ? 'the CLI ended the turn with an error' : `the CLI reported ${result.subtype}`;
    return { state: 'failed', reason: `${what}: ${detail}`.slice(0, 1000) };
  }
  if (inFlight > 0) return { state: 'uncertain', reason: `${exitNote}; ${inFlight} tool call(s) were in flight and their effect is unknown` };
  return { state: 'failed', reason: exitNote.slice(0, 1000) };
}

function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function truncateText(text: string): string {
  return text.length > MAX_TEXT_EVENT_CHARS ? `${text.slice(0, MAX_TEXT_EVENT_CHARS)}… [truncated ${text.length - MAX_TEXT_EVENT_CHARS} characters]` : text;
}

/** The start of a tool's result for the timeline, cut at a character boundary; shown as inert text. */
function resultPreview(text: string): { preview: string; previewTruncated: boolean } {
  if (Buffer.byteLength(text) <= TOOL_RESULT_PREVIEW_BYTES) return { preview: text, previewTruncated: false };
  const cut = Buffer.from(text).subarray(0, TOOL_RESULT_PREVIEW_BYTES).toString('utf8');
  return { preview: cut.endsWith('\ufffd') ? cut.slice(0, -1) : cut, previewTruncated: true };
}

function boundedArguments(input: unknown, redact: (text: string) => string): unknown {
  const json = redact(JSON.stringify(input ?? null));
  if (Buffer.byteLength(json) > MAX_ARGUMENT_EVENT_BYTES) return { truncated: true, bytes: Buffer.byteLength(json) };
  return JSON.parse(json) as unknown;
}

function firstLine(text: string): string | null {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '');
  return line === undefined ? null : line.trim().slice(0, 300);
}

