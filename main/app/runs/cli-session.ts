/**
 * What lives as long as one pinned-CLI process: the child, its private run folder with the
 * capability (B2), the broker and gateway registrations (B1, G1), the sandbox around it and the
 * run's upstreams (B3). A one-turn child's session ends with its turn. A warm session (issue 19)
 * keeps all of it between the turns of one conversation, so a follow-up turn starts nothing.
 *
 * Everything the long-lived side asks — a tool call's permission, an approval, a host, a server's
 * question, the CLI's messages, a model call — goes to the turn bound now (TurnHooks), so each
 * turn keeps its own run id, journal, grants and person to ask. Between turns no turn is bound:
 * tool calls and model calls are refused (B4 holds across turns) and stray output is dropped.
 */
import type { BrokerEvent, RunBinding, RunRegistration } from '../../broker/types.js';
import type { ApprovalDecision, ApprovalRequest } from '../../permissions/approval.js';
import type { GatewayExchange, GatewayRegistration, ProviderRoute } from '../../gateway/gateway.js';
import type { ProviderCredential } from '../../providers/provider-headers.js';
import type { RunTools } from '../../agents/run-tools.js';
import { CliProcess, type CliExit, type CliLaunch } from '../../runner/child.js';
import type { RunDir } from '../../runner/run-dir.js';
import type { CliMessage, PermissionRequest } from '../../runner/stream-parser.js';
import type { HostAnswer, HostQuestion, SandboxedLaunch } from '../../sandbox/engine.js';
import type { ElicitationReply, ElicitationRequest, Elicitor } from '../../upstreams/elicitation.js';
import type { PinnedToolRoute } from '../../upstreams/types.js';

/** The running turn's answers to what its CLI process and the services around it ask. */
export interface TurnHooks {
  /** False once the turn is stopping or done: new tool calls are refused. */
  accepting(): boolean;
  authorizeToolCall(tool: PinnedToolRoute, args: Record<string, unknown>): Promise<true | string>;
  approve(request: ApprovalRequest): Promise<ApprovalDecision>;
  onBrokerEvent(event: BrokerEvent): void;
  onModelCall(exchange: GatewayExchange): void;
  credential(): Promise<ProviderCredential>;
  /** X1: these tool calls have finished (a model request carries their results); their changes are captured before it goes on. */
  toolCallsFinished(toolUseIds: readonly string[]): Promise<void>;
  refreshCredential: (() => Promise<ProviderCredential>) | undefined;
  modelRefusal(model: string): string | null;
  decideHost(question: HostQuestion): Promise<HostAnswer>;
  elicitor(server: string): Elicitor;
  onMessages(messages: readonly CliMessage[]): void;
}

const NO_TURN = 'no turn of this conversation is running';
/** P3: a permission question nobody answers is denied at this bound, never allowed (a broker call's own bound). */
const APPROVAL_LIMIT_MS = 16 * 60_000;

export class CliSession {
  upstreams: RunTools | undefined;
  registration: RunRegistration | undefined;
  gatewayRoute: GatewayRegistration | undefined;
  sandboxed: SandboxedLaunch | null = null;
  runDir: RunDir | undefined;
  child: CliProcess | undefined;
  /**
   * Values a turn's journal must redact that belong to the session, not to one turn: the
   * capabilities and what the upstreams read (C3). Each turn bound later is told them again.
   */
  readonly secrets: string[] = [];
  /**
   * The conversation's last run this CLI took part in: the transcript it holds in memory ends
   * there. A run anywhere else since (another Ward process, `ward run`) means it is behind.
   */
  lastRunId: string | null = null;
  private hooks: TurnHooks | null = null;
  private closing: Promise<void> | undefined;
  /** The CLI's permission questions not answered yet, by request id: a cancel or the close answers them. */
  private readonly asking = new Map<string, (message: string) => void>();
  private readonly answering = new Set<Promise<void>>();

  /**
   * @param fingerprint everything the child was started with (argv, environment, files, hosts,
   *   agent version): a later turn reuses this process only when its own launch would be the same.
   * @param registrationId the id the broker and gateway know this process by: its first run's.
   * @param approvalLimitMs how long a permission question may wait for its answer (P3).
   */
  constructor(
    readonly fingerprint: string,
    readonly registrationId: string,
    private readonly approvalLimitMs = APPROVAL_LIMIT_MS,
  ) {}

  bind(hooks: TurnHooks, runId: string): void {
    this.hooks = hooks;
    this.lastRunId = runId;
  }

  unbind(): void {
    this.hooks = null;
  }

  addSecret(value: string): void {
    if (!this.secrets.includes(value)) this.secrets.push(value);
  }

  /** The CLI is running and the session was not closed: a next turn can use it. */
  get usable(): boolean {
    return this.closing === undefined && this.child?.alive === true;
  }

  /** The broker binding of this process; every decision goes to the turn bound at that moment. */
  binding(tools: readonly PinnedToolRoute[]): RunBinding {
    return {
      runId: this.registrationId,
      tools,
      upstreams: this.upstreams!,
      isAcceptingCalls: () => this.hooks?.accepting() ?? false,
      authorizeToolCall: (tool, args) => this.hooks?.authorizeToolCall(tool, args) ?? Promise.resolve(NO_TURN),
      onEvent: (event) => this.hooks?.onBrokerEvent(event),
      secrets: () => this.secrets,
    };
  }

  /** The gateway route of this process: no turn bound, no model call (G1). `refreshable`: a sign-in token (C5). */
  route(baseUrl: string, refreshable: boolean): ProviderRoute {
    return {
      runId: this.registrationId,
      baseUrl,
      credential: () => this.hooks?.credential() ?? Promise.reject(new Error(NO_TURN)),
      ...(refreshable ? { refreshCredential: () => this.hooks?.refreshCredential?.() ?? Promise.reject(new Error(NO_TURN)) } : {}),
      onExchange: (exchange) => this.hooks?.onModelCall(exchange),
      modelRefusal: (model) => (this.hooks === null ? NO_TURN : this.hooks.modelRefusal(model)),
      toolCallsFinished: (toolUseIds) => this.hooks?.toolCallsFinished(toolUseIds) ?? Promise.resolve(),
    };
  }

  decideHost(question: HostQuestion): Promise<HostAnswer> {
    return this.hooks?.decideHost(question) ?? Promise.resolve({ allow: false, reason: `Ward denied ${question.host}:${question.port}: ${NO_TURN}` });
  }

  /** What an upstream asks the person goes to the turn running when it asks. */
  elicitor(server: string): Elicitor {
    return {
      ask: (request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationReply> => {
        const hooks = this.hooks;
        return hooks === null ? Promise.reject(new Error(NO_TURN)) : hooks.elicitor(server).ask(request, signal);
      },
      refused: (reason) => this.hooks?.elicitor(server).refused(reason),
    };
  }

  spawn(launch: CliLaunch): CliProcess {
    const child = new CliProcess(launch, (messages) => this.take(child, messages));
    this.child = child;
    if (child.pid !== undefined) this.runDir?.recordChild(child.pid);
    return child;
  }

  /** The CLI's permission questions are answered here; everything else it says goes to the turn bound now. */
  private take(child: CliProcess, messages: readonly CliMessage[]): void {
    const rest: CliMessage[] = [];
    for (const message of messages) {
      if (message.kind === 'permission_request') {
        const answering = this.answer(child, message);
        this.answering.add(answering);
        void answering.finally(() => this.answering.delete(answering));
      } else if (message.kind === 'permission_cancelled') this.asking.get(message.requestId)?.('The CLI stopped waiting for the answer.');
      else rest.push(message);
    }
    if (rest.length > 0) this.hooks?.onMessages(rest);
  }

  /**
   * A permission question of the CLI (`can_use_tool`), answered by the turn bound when it came:
   * denied when malformed, when no turn accepts calls, when the turn's answer fails, when nobody
   * answers within the bound (P3), or when the session closes first.
   */
  private async answer(child: CliProcess, request: PermissionRequest): Promise<void> {
    const hooks = this.hooks;
    const deny = (message: string) => child.answerPermission(request.requestId, { behavior: 'deny', message });
    if (request.malformed === true) return deny('Malformed permission request.');
    if (hooks === null || !hooks.accepting()) return deny('The run is not accepting tool calls.');
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<ApprovalDecision>((resolve) => {
      timer = setTimeout(() => resolve({ behavior: 'deny', message: 'No answer in time.' }), this.approvalLimitMs);
      this.asking.set(request.requestId, (message) => resolve({ behavior: 'deny', message }));
    });
    const asked = Promise.resolve()
      .then(() => hooks.approve({ toolName: request.toolName, input: request.input, toolUseId: request.toolUseId }))
      .catch((): ApprovalDecision => ({ behavior: 'deny', message: 'The permission check failed.' }));
    try {
      child.answerPermission(request.requestId, await Promise.race([asked, unanswered]));
    } finally {
      clearTimeout(timer);
      this.asking.delete(request.requestId);
    }
  }

  get exited(): Promise<CliExit> | undefined {
    return this.child?.exited;
  }

  /**
   * Ends the process and everything started for it. With `graceMs`, a warm session's CLI is first
   * asked to exit (stdin closes) so its transcript is complete for the next `--resume`; then the
   * group is killed, the folder with the capability removed (B2), the capabilities closed and
   * the upstream calls drained (B1, B7). Idempotent.
   */
  close(graceMs = 0): Promise<void> {
    this.closing ??= this.shutDown(graceMs);
    return this.closing;
  }

  private async shutDown(graceMs: number): Promise<void> {
    // Open questions are denied, and the answers written, before the CLI's input ends.
    for (const end of this.asking.values()) end('The run ended.');
    await Promise.all(this.answering);
    const child = this.child;
    if (child !== undefined && graceMs > 0 && child.alive) {
      child.endInput();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([child.exited, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    child?.killGroup();
    this.runDir?.remove();
    this.gatewayRoute?.close();
    this.sandboxed?.release();
    try {
      await this.registration?.close();
    } catch {
      // close() only fails if the broker itself is broken; the run still settles.
    }
    await this.upstreams?.close().catch(() => undefined);
  }
}
