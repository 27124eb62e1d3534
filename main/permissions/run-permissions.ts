import type { ApprovalDecision, ApprovalRequest } from './approval.js';
import type { PinnedToolRoute } from '../upstreams/types.js';
import { describeError } from '../base/errors.js';
import { commandForPerson, commandForRecord, MAX_ASKED_COMMAND, summarizeArguments, type Answerer, type AuditRecord, type AuditSink } from './audit.js';
import { check, makeRequest, type PermissionRequest, type RequestGate } from './engine.js';
import { isWithin } from './paths.js';
import { callKey } from './call-key.js';
import { looksLikeSecretName, reservedEnvReason } from './env-grants.js';
import type { GrantStore } from './grant-store.js';
import { assertSandboxCanAllow, describeRule, formatHostPattern, parseHostPattern, type HostPattern, type Rule } from './grants.js';
import { mcpRequestForRoute, renderCliOptions, requestForToolCall, WARD_MCP_PREFIX, type CliPermissionOptions, type CliRenderMode } from './native-tools.js';
import { PROMPT_ANSWERS, type PromptAnswer, type Prompter } from './prompter.js';

/** How long a person has to answer before the request is denied. */
export const DEFAULT_PROMPT_TIMEOUT_MS = 120_000;
const MAX_PROMPT_TIMEOUT_MS = 15 * 60_000;
/** MCP calls approved once when the CLI asked, and not yet made; bounded. */
const MAX_PENDING_ONCE = 64;

export interface RunPermissionsOptions {
  /** The child's working directory; relative paths in tool inputs resolve against it. */
  readonly baseDir: string;
  /** Rules from `ward run` flags, the agent version and namespace defaults (checked against the policy here). */
  readonly rules: readonly Rule[];
  /** The admin policy's say (P5): requests it refuses are denied unasked; grants it forbids are refused. Null without a policy. */
  readonly gate: RequestGate | null;
  /** Persistent grants; without a store, "for this conversation" and "always" act like "once". */
  readonly grants: GrantStore | null;
  readonly conversationId: string;
  /** The run that asks; carried in prompts so the UI shows them in the right chat. */
  readonly runId?: string;
  readonly agentId: string;
  readonly agentName: string;
  readonly namespace: string;
  readonly routes: readonly PinnedToolRoute[];
  readonly prompter: Prompter;
  readonly audit: AuditSink;
  readonly promptTimeoutMs?: number;
  readonly now?: () => Date;
  /** Paths no grant or answer opens (Ward's own data), but for the run's own folders inside them. */
  readonly protect?: ProtectedPaths;
}

export interface ProtectedPaths {
  readonly hidden: readonly string[];
  readonly except: readonly string[];
}

interface Outcome {
  readonly allowed: boolean;
  readonly reason: string;
  /** Allowed by a person's answer at a prompt (not by a grant that was in force at spawn). */
  readonly byPerson?: boolean;
}

/** Whether the child of this turn can reach a path at all (the OS sandbox fixes its view at spawn). */
export type ChildReach = (hostPath: string, write: boolean) => boolean;

/**
 * The permission service of one run: answers the CLI's permission prompt tool (P3), checks
 * every MCP call the broker makes (B4), and writes exactly one audit record per check (P4).
 * Plug into the broker's RunBinding as
 *   approve: (request) => permissions.approve(request),
 *   authorizeToolCall: (tool, args) => permissions.authorizeToolCall(tool, args).
 */
export class RunPermissions {
  private readonly gate: RequestGate | undefined;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  /** One question at a time: a person answers in order, and an answer can settle the next one. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly approvedOnce = new Map<string, number>();
  /** Aborted when the run ends: open questions are withdrawn (and count as deny). */
  private readonly ended = new AbortController();

  constructor(private readonly options: RunPermissionsOptions) {
    this.gate = options.gate ?? undefined;
    for (const rule of options.rules) this.gate?.assertGrantable(rule);
    this.timeoutMs = Math.min(Math.max(options.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS, 1), MAX_PROMPT_TIMEOUT_MS);
    this.now = options.now ?? (() => new Date());
  }

  /** The run is over: withdraw open questions (a terminal stops waiting for an answer) and ask no more. */
  close(): void {
    this.ended.abort();
  }

  private childReach: ChildReach | undefined;

  /** Set once the child is spawned in a sandbox: an approval cannot make an unreachable path reachable. */
  setChildReach(reach: ChildReach | undefined): void {
    this.childReach = reach;
  }

  /** The rules in force right now: the run's own plus live stored grants (so a revoke counts at once). */
  currentRules(): Rule[] {
    const stored = this.options.grants?.activeRules(this.options.conversationId, this.options.agentId) ?? [];
    return [...this.options.rules, ...stored];
  }

  /** What to pass the CLI (P2): `--tools`, the ask rules, `--allowedTools`, `--disallowedTools`. */
  cliOptions(mode: CliRenderMode = 'ask'): CliPermissionOptions {
    return renderCliOptions(this.currentRules(), this.options.routes, mode);
  }

  /** The CLI's `--permission-prompt-tool` call: decide from the grants, else ask, else deny. */
  async approve(request: ApprovalRequest): Promise<ApprovalDecision> {
    const summary = summarizeArguments(request.input);
    const mapping = requestForToolCall(request.toolName, request.input, { baseDir: this.options.baseDir, routes: this.options.routes });
    if (!mapping.ok) {
      this.record(null, request.toolName, summary, 'deny', { by: 'refused' }, mapping.reason, 'approval');
      return { behavior: 'deny', message: `Ward denied ${request.toolName}: ${mapping.reason}` };
    }
    const outcome = await this.decide(mapping.request, request.toolName, summary, 'approval');
    if (!outcome.allowed) return { behavior: 'deny', message: `Ward denied ${request.toolName}: ${outcome.reason}` };
    const file = mapping.request;
    if (outcome.byPerson && (file.kind === 'read' || file.kind === 'write') && this.childReach?.(file.value, file.kind === 'write') === false) {
      // Say so instead of letting the tool fail with a puzzling "file does not exist".
      return {
        behavior: 'deny',
        message: `The person allowed ${request.toolName} on ${file.value}, but it is outside this turn's sandbox (Ward fixes what the agent can see when a turn starts). It is visible from the next turn if the person allowed it for this conversation or this agent.`,
      };
    }
    if (request.toolName.startsWith(WARD_MCP_PREFIX)) this.rememberApproved(request.toolName.slice(WARD_MCP_PREFIX.length), request.input);
    // The input passes unchanged: the person approved exactly this call.
    return { behavior: 'allow', updatedInput: request.input };
  }

  /**
   * S3: a host the sandbox's lists did not cover, as its proxy asks: the grants decide, else the
   * person (once / this conversation / always / deny), else deny. Journaled like every check (P4).
   */
  async decideHost(host: string, port: number): Promise<{ allowed: boolean; reason: string }> {
    const shownHost = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    let request: PermissionRequest;
    try {
      request = makeRequest('net', shownHost, this.options.baseDir);
      // An allow the proxy could not add to the run's list would be asked for and then fail.
      assertSandboxCanAllow('allow', 'net', request.value);
    } catch (error) {
      const reason = `not a host Ward can decide about: ${describeError(error)}`;
      this.record(null, 'network', shownHost, 'deny', { by: 'refused' }, reason, 'sandbox');
      return { allowed: false, reason };
    }
    const outcome = await this.decide(request, 'network', shownHost, 'sandbox');
    return { allowed: outcome.allowed, reason: outcome.reason };
  }

  /**
   * The run's allowed hosts as the sandbox's proxy takes them (S3): every `net` allow no deny
   * could narrow. An allow a deny overlaps (`*.example.com` and `evil.example.com`) is left to
   * decideHost, which weighs both the way every other check does, and so is anything an admin
   * policy would have to look at host by host.
   */
  sandboxHosts(): string[] {
    const rules = this.currentRules().filter((rule) => rule.kind === 'net');
    const denies = rules.filter((rule) => rule.effect === 'deny').map((rule) => parseHostPattern(rule.value));
    return rules
      .filter((rule) => rule.effect === 'allow')
      .map((rule) => parseHostPattern(rule.value))
      .filter((allow) => !denies.some((deny) => hostsOverlap(allow, deny)))
      // Under an admin policy only exact host:port entries it allows go in; the rest are checked per connection.
      .filter((allow) => this.gate === undefined || (!allow.wildcard && allow.port !== null && this.gate.refusal({ kind: 'net', value: formatHostPattern(allow) }) === null))
      .map(formatHostPattern);
  }

  /**
   * Deno's --allow-env: the variables the run's `env` grants pass from Ward's environment into the
   * child; nothing else beyond the fixed allowlist does. A name that looks like a secret is asked
   * about even when a flag grants it. Every decision is journaled (P4).
   */
  async grantedEnv(source: NodeJS.ProcessEnv): Promise<Record<string, string>> {
    const names = new Set(this.currentRules().filter((rule) => rule.kind === 'env' && rule.effect === 'allow').map((rule) => rule.value));
    const granted: Record<string, string> = {};
    for (const name of names) {
      const value = source[name];
      if (value === undefined || value === '') continue;
      // A grant stored before such names were refused when written still passes nothing.
      const reserved = reservedEnvReason(name);
      if (reserved !== null) {
        this.record({ kind: 'env', value: name }, 'environment', name, 'deny', { by: 'refused' }, reserved, 'spawn');
        continue;
      }
      const confirm = looksLikeSecretName(name) ? `${name} looks like a secret: Ward asks before it enters the agent's environment, even when a flag grants it` : undefined;
      const outcome = await this.decide({ kind: 'env', value: name, ...(confirm === undefined ? {} : { confirm }) }, 'environment', name, 'spawn');
      if (outcome.allowed) granted[name] = value;
    }
    return granted;
  }

  /** The broker's check before each MCP call (B4): live grants, one-shot approvals, else ask. */
  async authorizeToolCall(tool: PinnedToolRoute, args: Record<string, unknown>): Promise<true | string> {
    const request = mcpRequestForRoute(tool);
    const summary = summarizeArguments(args);
    const toolName = `${WARD_MCP_PREFIX}${tool.exposedName}`;
    if (this.consumeApproved(tool.exposedName, args)) {
      // Re-check deny rules and the policy: a revoke between approval and call still wins.
      const decision = check(request, this.currentRules().filter((rule) => rule.effect === 'deny'), this.gate);
      if (decision.decision === 'deny') {
        this.record(request, toolName, summary, 'deny', this.answererFor(decision.rule), decision.reason, 'broker');
        return decision.reason;
      }
      this.record(request, toolName, summary, 'allow', { by: 'person', answer: 'once' }, 'approved once through the approval tool', 'broker');
      return true;
    }
    const outcome = await this.decide(request, toolName, summary, 'broker');
    return outcome.allowed ? true : outcome.reason;
  }

  private rememberApproved(exposedName: string, args: unknown): void {
    if (this.approvedOnce.size >= MAX_PENDING_ONCE) this.approvedOnce.delete(this.approvedOnce.keys().next().value!);
    const key = callKey(exposedName, args);
    this.approvedOnce.set(key, (this.approvedOnce.get(key) ?? 0) + 1);
  }

  private consumeApproved(exposedName: string, args: unknown): boolean {
    const key = callKey(exposedName, args);
    const count = this.approvedOnce.get(key) ?? 0;
    if (count === 0) return false;
    if (count === 1) this.approvedOnce.delete(key);
    else this.approvedOnce.set(key, count - 1);
    return true;
  }

  private answererFor(rule: Rule | undefined): Answerer {
    return rule === undefined ? { by: 'policy' } : { by: 'rule', rule: describeRule(rule), ...(rule.grantId ? { grantId: rule.grantId } : {}) };
  }

  private decide(request: PermissionRequest, tool: string, summary: string, via: AuditRecord['via']): Promise<Outcome> {
    const failed = (error: unknown): Outcome => ({ allowed: false, reason: `permission check failed: ${describeError(error)}` });
    // Calls the grants settle never wait behind a person answering another question.
    try {
      if (this.settledByGrants(request)) return Promise.resolve(this.decideNow(request, tool, summary, via, false)).catch(failed);
    } catch (error) {
      return Promise.resolve(failed(error));
    }
    const run = this.queue.then(() => this.decideNow(request, tool, summary, via, true));
    this.queue = run.catch(() => undefined);
    return run.catch(failed);
  }

  /** Why a read or write request touches a protected path (or a search would reach one), else null. */
  private protectedReason(request: PermissionRequest): string | null {
    const protect = this.options.protect;
    if (protect === undefined || (request.kind !== 'read' && request.kind !== 'write')) return null;
    const own = protect.except.some((folder) => isWithin(folder, request.value));
    for (const hidden of protect.hidden) {
      if (isWithin(hidden, request.value) && !own) return `${request.value} is in Ward's own data folder, which an agent may never ${request.kind}`;
      if (request.subtree && isWithin(request.value, hidden) && request.value !== hidden) return `the search covers Ward's own data folder ${hidden}, which an agent may never see; search a folder that does not contain it`;
    }
    return null;
  }

  private settledByGrants(request: PermissionRequest): boolean {
    if (this.protectedReason(request) !== null) return true;
    try {
      return check(request, this.currentRules(), this.gate).decision !== 'prompt';
    } catch {
      return true; // decideNow records the failure as a deny
    }
  }

  private async decideNow(request: PermissionRequest, tool: string, summary: string, via: AuditRecord['via'], mayAsk: boolean): Promise<Outcome> {
    const hidden = this.protectedReason(request);
    if (hidden !== null) {
      this.record(request, tool, summary, 'deny', { by: 'refused' }, hidden, via);
      return { allowed: false, reason: hidden };
    }
    let decision;
    try {
      decision = check(request, this.currentRules(), this.gate);
    } catch (error) {
      const reason = `permission check failed: ${describeError(error)}`;
      this.record(request, tool, summary, 'deny', { by: 'refused' }, reason, via);
      return { allowed: false, reason };
    }
    if (decision.decision !== 'prompt') {
      const allowed = decision.decision === 'allow';
      this.record(request, tool, summary, allowed ? 'allow' : 'deny', this.answererFor(decision.rule), decision.reason, via);
      return { allowed, reason: decision.reason };
    }
    if (!mayAsk || !this.options.prompter.interactive) {
      const reason = `${decision.reason}, and no one can be asked`;
      this.record(request, tool, summary, 'deny', { by: 'no_one' }, reason, via);
      return { allowed: false, reason };
    }
    const command = request.commandLine === undefined ? undefined : commandForPerson(request.commandLine);
    if (command !== undefined && command.length > MAX_ASKED_COMMAND) {
      // Asking about what the person cannot read whole would let a hidden tail ride on a "yes".
      const reason = `${decision.reason}; the command is ${command.length} characters as shown, longer than Ward asks about (${MAX_ASKED_COMMAND}), so it was refused unasked`;
      this.record(request, tool, summary, 'deny', { by: 'refused' }, reason, via);
      return { allowed: false, reason };
    }
    const choices: PromptAnswer[] = request.compound ? ['once', 'deny'] : [...PROMPT_ANSWERS];
    const answer = await this.ask(request, tool, summary, decision.reason, choices);
    if (answer === 'ended') {
      const reason = 'the run ended before anyone answered';
      this.record(request, tool, summary, 'deny', { by: 'no_one' }, reason, via);
      return { allowed: false, reason };
    }
    if (answer === 'timeout') {
      const reason = `no answer within ${Math.round(this.timeoutMs / 1000)} s`;
      this.record(request, tool, summary, 'deny', { by: 'timeout', afterMs: this.timeoutMs }, reason, via);
      return { allowed: false, reason };
    }
    if (answer === 'deny') {
      this.record(request, tool, summary, 'deny', { by: 'person', answer }, 'denied by the person', via);
      return { allowed: false, reason: 'denied by the person' };
    }
    if (answer !== 'once') this.persist(request, answer);
    this.record(request, tool, summary, 'allow', { by: 'person', answer }, `allowed by the person (${answer})`, via);
    return { allowed: true, reason: `allowed by the person (${answer})`, byPerson: true };
  }

  private persist(request: PermissionRequest, answer: 'conversation' | 'always'): void {
    const grants = this.options.grants;
    if (grants === null) return;
    const rule: Rule = { effect: 'allow', kind: request.kind, value: request.value, source: answer === 'always' ? 'agent' : 'conversation' };
    this.gate?.assertGrantable(rule);
    grants.add(
      answer === 'always'
        ? { scope: 'agent', agentId: this.options.agentId, effect: 'allow', kind: request.kind, value: request.value, grantedBy: 'prompt:always' }
        : { scope: 'conversation', conversationId: this.options.conversationId, effect: 'allow', kind: request.kind, value: request.value, grantedBy: 'prompt:conversation' },
    );
  }

  private async ask(request: PermissionRequest, tool: string, summary: string, reason: string, choices: PromptAnswer[]): Promise<PromptAnswer | 'timeout' | 'ended'> {
    if (this.ended.signal.aborted) return 'ended';
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onEnded: (() => void) | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve('timeout');
      }, this.timeoutMs);
    });
    const ended = new Promise<'ended'>((resolve) => {
      onEnded = () => {
        controller.abort();
        resolve('ended');
      };
      this.ended.signal.addEventListener('abort', onEnded, { once: true });
    });
    const question = {
      tool,
      kind: request.kind,
      value: request.value,
      argumentsSummary: summary,
      ...(request.commandLine === undefined ? {} : { command: commandForPerson(request.commandLine) }),
      reason,
      agent: this.options.agentName,
      namespace: this.options.namespace,
      conversationId: this.options.conversationId,
      runId: this.options.runId ?? null,
      choices,
      expiresAt: Date.now() + this.timeoutMs,
    };
    try {
      const answer = await Promise.race([this.options.prompter.ask(question, controller.signal).catch(() => 'deny' as const), timeout, ended]);
      // Anything but a listed choice (a buggy prompter, a dismissed dialog) is a deny.
      return answer === 'timeout' || answer === 'ended' || choices.includes(answer) ? answer : 'deny';
    } finally {
      clearTimeout(timer);
      this.ended.signal.removeEventListener('abort', onEnded!);
      controller.abort();
    }
  }

  private record(
    request: PermissionRequest | null,
    tool: string,
    argumentsSummary: string,
    decision: 'allow' | 'deny',
    answerer: Answerer,
    reason: string,
    via: AuditRecord['via'],
  ): void {
    // A sink that throws propagates: an unrecorded decision must not take effect.
    this.options.audit({
      kind: request?.kind ?? null,
      value: request?.value ?? null,
      tool,
      argumentsSummary,
      ...(request?.commandLine === undefined ? {} : { command: commandForRecord(request.commandLine) }),
      decision,
      answerer,
      reason: reason.slice(0, 500),
      via,
      at: this.now().toISOString(),
    });
  }
}

/** Whether some host (and port) could match both patterns. Errs towards yes: an overlap only costs a check. */
function hostsOverlap(a: HostPattern, b: HostPattern): boolean {
  if (a.port !== null && b.port !== null && a.port !== b.port) return false;
  const covers = (pattern: HostPattern, host: string) => host === pattern.host || (pattern.wildcard && host.endsWith(`.${pattern.host}`));
  return covers(a, b.host) || covers(b, a.host) || (a.wildcard && b.wildcard && (a.host.endsWith(`.${b.host}`) || b.host.endsWith(`.${a.host}`)));
}
