/**
 * One turn = one admitted run. A Turn holds that turn's state and runs its steps in order:
 *   prepare     — journal run_started, check the pin (R1) and the policy (P5), read the credential
 *   planLaunch  — permissions (P1–P4); the child's argv, allowlisted env (R2, R3) and sandbox files
 *   acquire     — the conversation's warm CLI when its launch is the same (issue 19), else a new
 *                 one: the run's upstreams (B3), the broker capability (B1), a private run folder
 *                 with mcp.json (B2), the sandbox (./launch.ts, ./cli-session.ts hold all of it)
 *   stream      — stream-json → journal (./turn-stream.ts), init check (R3), turn timeout; ends at
 *                 the CLI's result (a warm session) or its exit
 *   finish      — keep the session warm, or kill the group, remove the folder, close the
 *                 capability and drain (B7); record what the CLI never reported, settle (R5, R8;
 *                 ./turn-settle.ts)
 * Every event is committed to the journal before any subscriber hears of it.
 */
import { describeError } from '../../base/errors.js';
import { traceMark } from '../../base/trace.js';
import type { Namespace } from '../../namespaces/namespace.js';
import type { Rule } from '../../permissions/grants.js';
import type { Prompter } from '../../permissions/prompter.js';
import type { RunPermissions } from '../../permissions/run-permissions.js';
import type { RunElicitations } from '../../permissions/elicitations.js';
import { modelAllowed } from '../../policy/policy.js';
import { readinessFor, type CheckedReadiness } from './readiness.js';
import type { CliExit, CliProcess } from '../../runner/child.js';
import { nativeTranscriptExists } from '../../runner/transcript.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import { CliSession, type TurnHooks } from './cli-session.js';
import { conversationPlan, launchSpec, openSessionTools, runPermissions, servesTools, startSession, type LaunchSpec, type Plan } from './launch.js';
import { IdleWatch } from './idle-watch.js';
import { truncateText } from './event-bounds.js';
import type { TurnDeps } from './turn-deps.js';
import { TurnChanges } from './turn-changes.js';
import { TurnJournal } from './turn-journal.js';
import { permissionAudit, turnElicitations } from './turn-questions.js';
import { decideOutcome, settleRun, type Outcome } from './turn-settle.js';
import { TurnStream } from './turn-stream.js';
import { warmKey, type WarmSessions } from './warm-sessions.js';
import { claudeConfigDir } from './workspace.js';

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
  /** Who answers this turn's questions, if not the app's prompter. */
  readonly prompter?: Prompter;
}

class StopBeforeSpawn extends Error {}

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
  private readonly stream: TurnStream;
  private permissions: RunPermissions | undefined;
  private elicitations: RunElicitations | undefined;
  /** The CLI process this turn runs in, with everything that lives as long as it. */
  private session: CliSession | undefined;
  private plan: Plan | undefined;
  private changes: TurnChanges | undefined;

  constructor(
    private readonly deps: TurnDeps,
    private readonly input: TurnInput,
    /** The desktop's kept CLI processes; null where every turn starts its own CLI (`ward run`). */
    private readonly warm: WarmSessions | null = null,
  ) {
    this.journal = new TurnJournal(input.store, input.conversationId, input.runId);
    this.stream = new TurnStream(this.journal, {
      abort: (reason) => this.abort(reason),
      aborted: () => this.abortReason !== null,
      settled: () => this.state === 'done',
    });
  }

  /** Runs the turn to its end; never throws (a failure is the outcome). */
  async run(): Promise<Outcome> {
    let outcome: Outcome = { state: 'failed', reason: 'the run ended before the CLI started' };
    try {
      const plan = await this.prepare();
      const launch = await this.planLaunch(plan);
      traceMark('launch-planned');
      this.trackChanges(plan, launch);
      traceMark('changes-before');
      const child = await this.acquire(plan, launch);
      const exit = await this.follow(child);
      traceMark('cli-exited');
      outcome = decideOutcome({
        exit,
        stop: this.stop(),
        abortReason: this.abortReason,
        result: this.stream.result,
        callsInFlight: this.stream.callsInFlight,
        lastDiagnostic: this.stream.lastDiagnostic,
        redact: (text) => this.journal.redact(text),
      });
    } catch (error) {
      if (error instanceof StopBeforeSpawn || this.stopRequested) outcome = { state: 'stopped', reason: this.stopReason };
      else outcome = { state: 'failed', reason: this.journal.redact(describeError(error)).slice(0, 1000) };
    } finally {
      // release() kills the CLI's process group before its first await: the scan after the turn starts
      // once nothing of the agent's runs, and overlaps the drain; one begun earlier is judged once it is all gone.
      const released = this.release();
      const tracked = this.changes?.after(released);
      await released;
      traceMark('released');
      await tracked;
      traceMark('changes-after');
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

  private stop(): { requested: boolean; reason: string } {
    return { requested: this.stopRequested, reason: this.stopReason };
  }

  private interruptThenKill(): void {
    // Ward cancels the upstream calls itself: whether the interrupted CLI gets to is a race (R6).
    this.session?.registration?.cancelCalls();
    this.child?.interrupt();
    this.graceTimer ??= setTimeout(() => this.child?.killGroup(), this.deps.stopGraceMs);
  }

  private abort(reason: string): void {
    this.abortReason ??= reason;
    this.session?.registration?.cancelCalls();
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
    // An agent with MCP tools needs the broker: it starts while the turn is checked (a failure fails the turn where it registers).
    if (servesTools(base)) void deps.broker().catch(() => undefined);
    this.journal.emit('run_started', {
      requestId: input.requestId,
      agent: base.agentName,
      agentVersion: base.conversation.agentVersion,
      model: base.profile.model,
      session: base.resume || base.fork !== null ? 'resume' : 'new',
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
    // The one place the turn decides whether its CLI reads turns on stdin and may stay warm.
    const warm = this.warm !== null && limits.warmSessionMs > 0;
    const plan: Plan = { ...base, pinned, access, limits, warm };
    this.plan = plan;
    return plan;
  }

  /** Permissions (P1–P4) and how the child would be started: argv, environment, sandbox files and hosts. */
  private async planLaunch(plan: Plan): Promise<LaunchSpec> {
    const { deps, input } = this;
    this.permissions = runPermissions(deps, plan, input, permissionAudit(this.journal));
    const keepSecret = (value: string) => this.session?.addSecret(value);
    this.elicitations = turnElicitations(deps, { ...input, agentName: plan.agentName, accepting: () => this.state === 'running', keepSecret }, this.journal);
    return launchSpec(deps, plan, this.permissions, (value) => this.journal.addSecret(value));
  }

  /** X1: every root the run may write (workspace, write grants), an interrupted rewind of theirs finished before the CLI starts. */
  private trackChanges(plan: Plan, launch: LaunchSpec): void {
    const { namespace, store, conversationId } = this.input;
    const { write, denyRead } = launch.files.grants;
    const { changeStoreMaxBytes: maxStoreBytes, perCallScanMs } = plan.limits;
    this.changes = new TurnChanges(this.deps, this.journal, { namespace, store, conversationId, roots: [plan.workspace, ...write], denyRead, maxStoreBytes, perCallScanMs });
    this.changes.recover();
  }

  /**
   * The CLI this turn runs in, running: the conversation's warm CLI when it was started the same
   * way, else a new one with its upstreams, capabilities, folder and sandbox, spawned.
   */
  private async acquire(plan: Plan, spec: LaunchSpec): Promise<CliProcess> {
    const { store, conversationId, runId } = this.input;
    // A turn of this conversation run elsewhere since (`ward run`, another Ward) is not in the kept CLI's memory.
    // S6: a nested repository or start-up file made since the kept CLI's sandbox was set up needs a new one.
    const current = (session: CliSession) => (session.sandboxed === null ? Promise.resolve(true) : this.deps.sandbox.sameBuiltInDenies(session.sandboxed));
    const kept = plan.warm ? await this.warm!.take(warmKey(this.input.namespace, conversationId), spec.fingerprint, store.runs.latestId(conversationId, runId), current) : undefined;
    if (kept !== undefined) {
      this.session = kept;
      for (const secret of kept.secrets) this.journal.addSecret(secret);
      kept.bind(this.hooks(plan, spec), runId);
      this.permissions!.setChildReach(kept.sandboxed?.reachable);
      traceMark('warm-session');
      this.markRunning();
      return kept.child!;
    }
    const session = new CliSession(spec.fingerprint, runId);
    this.session = session;
    session.bind(this.hooks(plan, spec), runId);
    await openSessionTools(this.deps, this.input.namespace, plan, session, (value) => this.journal.addSecret(value));
    const launch = await startSession(this.deps, plan, spec, session);
    this.permissions!.setChildReach(session.sandboxed?.reachable);
    this.markRunning();
    const child = session.spawn(launch);
    // A failure to load surfaces when the CLI opens its MCP session (the broker answers 500).
    if (spec.servesTools) void this.deps.broker().then((broker) => broker.prepareSessions?.()).catch(() => undefined);
    return child;
  }

  /** What this turn answers for the CLI process it runs in (./cli-session.ts). */
  private hooks(plan: Plan, spec: LaunchSpec): TurnHooks {
    const permissions = this.permissions!;
    const elicitations = this.elicitations!;
    const { refresh } = plan.access;
    const expected = { sessionId: plan.conversation.cliSessionId, version: plan.pinned.version, tools: spec.expectedTools, servesTools: spec.servesTools };
    return {
      accepting: () => this.state === 'running',
      authorizeToolCall: (tool, callArgs) => permissions.authorizeToolCall(tool, callArgs),
      approve: (request) => permissions.approve(request),
      onBrokerEvent: (event) => this.stream.onBrokerEvent(event),
      onModelCall: (exchange) => this.stream.onModelCall(exchange, plan.profile.model),
      // X1: no model answer, so no tool call, before the files are indexed.
      credential: async () => {
        await this.changes?.ready();
        return plan.access.credential();
      },
      toolCallsFinished: (toolUseIds) => this.changes?.afterCalls(toolUseIds) ?? Promise.resolve(),
      refreshCredential: refresh === undefined ? undefined : () => refresh.call(plan.access),
      modelRefusal: (model) => (modelAllowed(this.deps.policy, model) ? null : `model ${model} is not allowed by ${this.deps.policy!.reason}`),
      decideHost: async ({ host, port }) => {
        const decision = await permissions.decideHost(host, port);
        return decision.allowed ? { allow: true } : { allow: false, reason: `Ward denied ${host}:${port}: ${decision.reason}` };
      },
      elicitor: (server) => elicitations.for(server),
      onMessages: (messages) => {
        this.idleWatch?.touch();
        this.stream.onChunk(messages, expected);
      },
    };
  }

  private markRunning(): void {
    this.checkNotStopped();
    this.input.store.runs.transition(this.input.runId, 'running');
    this.state = 'running';
  }

  /**
   * Hands the CLI this turn's prompt and follows the turn until it ends: a warm session's at its
   * result, a one-turn CLI's at its exit (or the turn times out). Resolves with the exit, or null
   * when the CLI lives on after its result.
   */
  private follow(child: CliProcess): Promise<CliExit | null> {
    const { limits, warm } = this.plan!;
    child.sendTurn(this.input.prompt);
    traceMark('spawned');
    // X1: indexed while the CLI reads the prompt (a warm CLI gets it first: the index's set-up takes
    // milliseconds); in this same tick, so its first model call finds it and waits (hooks' credential).
    this.changes!.start(this.session?.sandboxed?.standIns ?? []);
    this.turnTimer = setTimeout(() => {
      this.abortReason ??= `aborted: the turn exceeded ${Math.round(limits.turnTimeoutMs / 1000)} s (turnTimeoutMinutes in settings.json sets this bound)`;
      this.interruptThenKill();
    }, limits.turnTimeoutMs);
    this.idleWatch = new IdleWatch(limits.idleTimeoutMs, () => this.stream.toolsRunning(), (reason) => {
      this.abortReason ??= `aborted: ${reason}`;
      this.interruptThenKill();
    });
    this.idleWatch.touch();
    // A stop that raced the spawn.
    if (this.stopRequested) child.interrupt();
    // A one-turn CLI exits once its input ends after the result; X1: the end scan starts meanwhile.
    if (!warm)
      void this.stream.resultSeen.then(() => {
        child.endInput();
        this.changes?.settling();
      });
    return warm ? Promise.race([this.stream.resultSeen, child.exited]) : child.exited;
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
    this.stream.close();
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
      this.stream.result !== null &&
      this.abortReason === null &&
      session.usable &&
      this.stream.callsInFlight === 0 &&
      (session.registration?.inFlight() ?? 0) === 0
    );
  }

  /** What the CLI never reported: the native session, and what the stream never saw answered. */
  private recordUnreported(): void {
    const { store, conversationId } = this.input;
    try {
      // The session counts as started only once the CLI has written it (a child killed early may not have).
      if (nativeTranscriptExists(claudeConfigDir(this.deps.home, this.input.namespace, conversationId), store.conversations.get(conversationId).cliSessionId)) {
        store.conversations.markSessionStarted(conversationId);
      }
      this.stream.recordUnreported();
    } catch {
      // the journal is failing; settle still records the run state
    }
  }

  /** Moves the run to its final state and journals run_finished (state first: it is what admission reads). */
  private settle(wanted: Outcome): Outcome {
    const final = settleRun(this.input.store, this.input.runId, wanted, this.stop());
    this.state = 'done';
    this.journal.emit('run_finished', { state: final.state, reason: final.reason, anchored: this.input.store.anchors.keyAtHand });
    return final;
  }
}
