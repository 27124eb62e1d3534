/**
 * RunService: admits turns (R7) and keeps the ones this process runs, so they can be stopped
 * (R6) or attached to; each turn itself is a Turn (./turn.ts). Electron-free: the `ward run`
 * command and the desktop both drive it through the composition root (../ward-app.ts).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MAX_PROMPT_CHARS } from '../../../common/limits.js';
import { WardError } from '../../base/errors.js';
import { traceMark } from '../../base/trace.js';
import { DEFAULT_AGENT, DEFAULT_AGENT_SPEC, isConnectionTool, parseAgentSpec, type AgentSpec } from '../../agents/spec.js';
import { wardCommand, type Namespace } from '../../namespaces/namespace.js';
import type { Rule } from '../../permissions/grants.js';
import type { Prompter } from '../../permissions/prompter.js';
import { assertRulesAllowed } from '../../policy/policy.js';
import { sweepStaleRunDirs } from '../../runner/run-dir.js';
import type { Conversation } from '../../store/conversations.js';
import type { DataFolder } from '../../store/data-folder.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import { fingerprintInput, isProcessAlive, newRequestId, type Run, type RunState } from '../../store/runs.js';
import { assertGrantsOutsideWardData, assertOutsideWardData } from '../ward-data.js';
import { assertSandboxUsable, sandboxPlatform } from '../../sandbox/engine.js';
import { assertConnectionToolsPinned, checkConnectionTools } from '../../agents/run-tools.js';
import { resolveModelProfile } from '../../providers/model-profile.js';
import { checkReadiness, type CheckedReadiness } from './readiness.js';
import { Turn } from './turn.js';
import type { TurnDeps } from './turn-deps.js';
import { prestartNewSession, prestartSession, type PrestartOutcome } from './prestart.js';
import { warmKey, WarmSessions } from './warm-sessions.js';
import { checkWorkspace, claudeConfigDir, conversationWorkspace } from './workspace.js';
import { assertGrantsComposeWithSandbox } from '../../sandbox/files.js';
import { ON_AGENTS } from '../../../common/desktop-errors.js';

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
  /**
   * Called once when this turn makes a new conversation, before its turn starts: the desktop
   * stores what the chat may do in its project folder here (a retried request makes none).
   */
  readonly onNewConversation?: (conversationId: string) => void;
  /** Who answers this turn's questions (the `ward` service: the terminal that asked); default the app's. */
  readonly prompter?: Prompter;
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

const TERMINAL: readonly RunState[] = ['stopped', 'succeeded', 'failed'];

/** J3: a turn's anchor (main/app/journal-integrity.ts). */
export interface TurnAnchoring {
  /** As the turn starts: reads the anchor key, so the turn's run_finished can say its end will be anchored. Never throws. */
  prepare(store: NamespaceStore): void;
  /** After the turn settled, before its outcome is handed out. Never throws. */
  anchor(store: NamespaceStore, conversationId: string): Promise<void>;
}
const NO_ANCHORING: TurnAnchoring = { prepare: () => undefined, anchor: async () => undefined };
/** How often a run owned by another Ward process is polled when attaching to it. */
const FOREIGN_POLL_MS = 250;

interface ActiveTurn {
  readonly turn: Turn;
  readonly handle: RunHandle;
}

/** A CLI started for the next new conversation (prestartNew): the conversation it was started as, not stored yet, and its grants. */
interface NextNewConversation {
  readonly namespace: Namespace;
  readonly draft: Conversation;
  readonly rules: string;
}

export class RunService {
  private readonly active = new Map<string, ActiveTurn>();
  /** The conversations' CLIs kept between turns (issue 19); null when every turn starts its own. */
  private readonly warm: WarmSessions | null;
  private nextNew: NextNewConversation | undefined;

  constructor(
    private readonly folder: DataFolder,
    private readonly deps: TurnDeps,
    private readonly anchoring: TurnAnchoring = NO_ANCHORING,
    warmSessions = false,
  ) {
    this.warm = warmSessions ? new WarmSessions(deps.stopGraceMs) : null;
    // Folders (with a capability inside) left by a Ward process that was killed.
    sweepStaleRunDirs(isProcessAlive, deps.tmpRoot);
  }

  /** The agent version a new conversation uses; the built-in "default" agent is published on first use. */
  static resolveAgent(store: NamespaceStore, name: string = DEFAULT_AGENT): { agentId: string; version: number; spec: AgentSpec } {
    let version = store.agents.find(name);
    if (version === undefined && name === DEFAULT_AGENT) version = store.agents.publish(DEFAULT_AGENT, DEFAULT_AGENT_SPEC);
    if (version === undefined) throw noSuchAgent(store.namespace, name);
    return { agentId: version.agentId, version: version.version, spec: parseAgentSpec(version.spec) };
  }

  /**
   * How the `ward run` command and the desktop start a turn: preflight, then startTurn. A turn
   * that would be refused is refused before any conversation or run is created.
   */
  async start(input: StartTurnInput): Promise<RunHandle> {
    // The sandbox's proxies (~20 ms to start) come up while the keychain is read.
    this.deps.sandbox.prewarm();
    const checked = await this.preflight(input);
    return this.startTurn(input, checked);
  }

  /**
   * Every refusal that needs no run, checked without writing anything (issue 16 #7): the input,
   * the agent, the pinned CLI, the policy, the model credential, and the agent version's pinned
   * connection tools as the registry records them (for a new conversation, as the servers list
   * them now). Returns the readiness check, for the turn admitted right after (start()); the
   * connection tools are checked again as the turn opens them.
   */
  async preflight(input: StartTurnInput): Promise<CheckedReadiness | undefined> {
    const { store } = this.checkInput(input);
    // A request id already used attaches to what it made: nothing new would be created.
    if (input.requestId !== undefined && store.runs.conversationOfRequest(input.requestId) !== undefined) return undefined;
    const { spec, label } = this.agentFor(store, input);
    const profile = resolveModelProfile(this.deps.home, input.namespace, spec.modelProfile, this.deps.env);
    const secrets: string[] = [];
    const readiness = await checkReadiness(this.deps, input.namespace, spec, profile, (value) => secrets.push(value));
    const checked: CheckedReadiness = { spec, profile, readiness, secrets };
    const connectionTools = spec.tools.filter(isConnectionTool);
    if (connectionTools.length === 0) return checked;
    const manager = await this.deps.openConnections(input.namespace, () => undefined);
    try {
      // A turn that would start a conversation also asks the servers what they list now, so a
      // schema changed upstream refuses it before the conversation exists; a conversation's later
      // turns leave that to the turn itself, which asks anyway (a server is not started twice).
      if (input.conversationId === undefined) await checkConnectionTools(manager, connectionTools, label, input.namespace);
      else assertConnectionToolsPinned(manager.registry, connectionTools, label, input.namespace);
    } finally {
      await manager.close();
    }
    return checked;
  }

  /** Whether a turn is running (the audit sink then only trickles). */
  get turning(): boolean {
    return this.active.size > 0;
  }

  /**
   * Admits and starts a turn. Returns once the run is admitted (or attached); the turn proceeds
   * in the background and `done` settles with its outcome. `checked`: the preflight just made.
   */
  startTurn(input: StartTurnInput, checked?: CheckedReadiness): RunHandle {
    const { store, requestId, workspace, rules } = this.checkInput(input);
    const conversation = this.conversationFor(store, input, requestId, workspace);

    const fingerprint = fingerprintInput({ prompt: input.prompt, agentId: conversation.agentId, agentVersion: conversation.agentVersion });
    const cursor = store.journal.lastSeq(conversation.id);
    const admission = store.runs.admit(conversation.id, requestId, fingerprint);
    if (admission.attached) return this.attach(store, admission.run);

    const runId = admission.run.id;
    traceMark('admitted');
    this.anchoring.prepare(store);
    const turn = new Turn(this.deps, { namespace: input.namespace, store, conversationId: conversation.id, runId, requestId, prompt: input.prompt, rules, checked, ...(input.prompter === undefined ? {} : { prompter: input.prompter }) }, this.warm);
    const done = Promise.resolve()
      .then(() => turn.run())
      .then(async (outcome) => {
        traceMark('run-finished');
        await this.anchoring.anchor(store, conversation.id);
        traceMark('anchored');
        return { runId, conversationId: conversation.id, ...outcome };
      });
    const handle: RunHandle = { runId, conversationId: conversation.id, attached: false, cursor, done, childPid: () => turn.childPid() };
    this.active.set(runId, { turn, handle });
    void done.finally(() => this.active.delete(runId));
    return handle;
  }

  /** The checks of the input alone (prompt, request id, then checkLaunch). */
  private checkInput(input: StartTurnInput): { store: NamespaceStore; requestId: string; workspace: string | undefined; rules: readonly Rule[] } {
    if (typeof input.prompt !== 'string' || input.prompt.trim() === '') throw new WardError('usage', 'the prompt is empty');
    if (input.prompt.length > MAX_PROMPT_CHARS) throw new WardError('usage', `the prompt exceeds ${MAX_PROMPT_CHARS} characters`);
    const requestId = input.requestId ?? newRequestId();
    if (!/^[A-Za-z0-9._:-]{1,128}$/.test(requestId)) throw new WardError('usage', 'a request id is 1–128 of A-Z a-z 0-9 . _ : -');
    return { ...this.checkLaunch(input), requestId };
  }

  /** What a turn's launch is checked for: the namespace (sandbox, policy), the workspace and the grants. */
  private checkLaunch(input: Pick<StartTurnInput, 'namespace' | 'workspace' | 'permissions'>): { store: NamespaceStore; workspace: string | undefined; rules: readonly Rule[] } {
    const store = this.namespaceStore(input.namespace);
    const workspace = input.workspace === undefined ? undefined : checkWorkspace(input.workspace);
    if (workspace !== undefined) assertOutsideWardData(this.deps.home, 'the workspace', workspace);
    const rules = input.permissions ?? [];
    const { policy } = this.deps;
    assertRulesAllowed(policy, rules);
    assertGrantsOutsideWardData(this.deps.home, rules);
    assertGrantsComposeWithSandbox(rules, sandboxPlatform());
    return { store, workspace, rules };
  }

  /** The namespace's store, when a turn may run in it: the sandbox is usable (S1) and the policy allows the namespace. */
  private namespaceStore(namespace: Namespace): NamespaceStore {
    const store = this.folder.store(namespace, { mustExist: true });
    // WARD_SANDBOX=require without a working sandbox: refused before admission, nothing spawned (S1).
    assertSandboxUsable(this.deps.sandboxStatus);
    const { policy } = this.deps;
    if (policy?.namespace != null && policy.namespace !== namespace.name) {
      throw new WardError('policy_refused', `namespace ${namespace.name}: refused by ${policy.reason}, which fixes the namespace to ${policy.namespace}`);
    }
    return store;
  }

  /** The agent version a turn would run, read only (the built-in agent is published on the first admitted turn). */
  private agentFor(store: NamespaceStore, input: StartTurnInput): { spec: AgentSpec; label: string } {
    if (input.conversationId !== undefined) {
      const conversation = store.conversations.resolve(input.conversationId);
      const version = store.agents.getById(conversation.agentId, conversation.agentVersion);
      return { spec: parseAgentSpec(version.spec), label: `agent ${version.agentName}@${version.version}` };
    }
    const name = input.agent ?? DEFAULT_AGENT;
    const version = store.agents.find(name);
    if (version !== undefined) return { spec: parseAgentSpec(version.spec), label: `agent ${name}@${version.version}` };
    if (name === DEFAULT_AGENT) return { spec: DEFAULT_AGENT_SPEC, label: `agent ${name}` };
    throw noSuchAgent(store.namespace, name);
  }

  /**
   * Starts the conversation's CLI ahead of its next turn and keeps it warm (./prestart.ts): the
   * desktop asks when the person starts writing in a chat. Needs warm sessions; refuses what a
   * turn of the conversation would be refused before admission.
   */
  prestart(input: { readonly namespace: Namespace; readonly conversationId: string }): Promise<PrestartOutcome> {
    const store = this.namespaceStore(input.namespace);
    const conversation = store.conversations.resolve(input.conversationId);
    if (this.warm === null) return Promise.resolve('not_ahead');
    return prestartSession(this.deps, this.warm, { namespace: input.namespace, store, conversationId: conversation.id });
  }

  /**
   * Starts a CLI ahead for the next new conversation made with this agent, workspace and grants
   * (the `ward` service, after a `ward run` that made one): that turn then writes its prompt to a
   * running CLI. One at a time; a new request replaces the last. Needs warm sessions.
   */
  async prestartNew(input: Omit<StartTurnInput, 'prompt' | 'conversationId'>): Promise<PrestartOutcome> {
    if (this.warm === null) return 'not_ahead';
    const { store, workspace, rules } = this.checkLaunch(input);
    const agent = RunService.resolveAgent(store, input.agent);
    void this.dropNextNew().catch(() => undefined);
    const draft: Conversation = { id: randomUUID(), cliSessionId: randomUUID(), agentId: agent.agentId, agentVersion: agent.version, sessionStarted: false, title: '', workspace: workspace ?? null, createdAt: new Date().toISOString(), lastSeq: 0 };
    this.nextNew = { namespace: input.namespace, draft, rules: JSON.stringify(rules) };
    return prestartNewSession(this.deps, this.warm, { namespace: input.namespace, store, draft, rules });
  }

  /** The ids of the CLI started ahead when a new conversation fits its launch; one that does not is closed. */
  private takeNextNew(namespace: Namespace, agent: { agentId: string; version: number }, workspace: string | undefined, rules: readonly Rule[]): { id: string; cliSessionId: string } | undefined {
    const next = this.nextNew;
    if (next === undefined) return undefined;
    const { draft } = next;
    const fits = next.namespace.name === namespace.name && draft.agentId === agent.agentId && draft.agentVersion === agent.version && draft.workspace === (workspace ?? null) && next.rules === JSON.stringify(rules);
    if (!fits) return void this.dropNextNew().catch(() => undefined);
    this.nextNew = undefined;
    return { id: draft.id, cliSessionId: draft.cliSessionId };
  }

  /** Closes the CLI started for a new conversation none took, and removes the folders it made: no conversation names them. */
  private async dropNextNew(): Promise<void> {
    const next = this.nextNew;
    this.nextNew = undefined;
    if (next === undefined) return;
    const { namespace, draft } = next;
    await this.warm?.discard(warmKey(namespace, draft.id));
    fs.rmSync(path.dirname(claudeConfigDir(this.deps.home, namespace, draft.id)), { recursive: true, force: true });
    if (draft.workspace === null) fs.rmSync(conversationWorkspace(this.deps.home, namespace, draft), { recursive: true, force: true });
  }

  /** Closes the CLI kept warm for the conversation, if any (a conversation rewind: its memory holds the messages rewound). */
  async discardWarm(namespace: Namespace, conversationId: string): Promise<void> {
    await this.warm?.discard(warmKey(namespace, conversationId));
  }

  /**
   * R6: interrupt the child, SIGKILL its process group after the grace period, wait for tool
   * calls to drain, then record `stopped`. Calling it again escalates at once.
   */
  stop(runId: string, reason = 'stopped by the user'): Promise<RunOutcome> {
    const active = this.active.get(runId);
    if (active === undefined) throw new WardError('not_found', `run ${runId} is not running in this Ward process`);
    active.turn.requestStop(reason);
    return active.handle.done;
  }

  /** Stops every run this service started (Ward is exiting), waits for them, then ends the warm CLIs. */
  async stopAll(reason = 'Ward is shutting down'): Promise<void> {
    const turns = [...this.active.values()];
    for (const { turn } of turns) if (!turn.stopRequested) turn.requestStop(reason);
    await Promise.allSettled(turns.map(({ handle }) => handle.done));
    await this.dropNextNew();
    await this.warm?.closeAll();
  }

  /** The conversation a turn belongs to: the one named, the one this request made before, or a new one. */
  private conversationFor(store: NamespaceStore, input: StartTurnInput, requestId: string, workspace: string | undefined): Conversation {
    if (input.conversationId !== undefined) {
      const conversation = store.conversations.resolve(input.conversationId);
      const agent = store.agents.getById(conversation.agentId, conversation.agentVersion);
      if (input.agent !== undefined && input.agent !== agent.agentName) {
        throw new WardError('usage', `conversation ${conversation.id} uses agent ${agent.agentName}; start a new conversation for agent ${input.agent}`);
      }
      const kept = conversationWorkspace(this.deps.home, input.namespace, conversation);
      if (workspace !== undefined && workspace !== kept) {
        throw new WardError('usage', `conversation ${conversation.id} has its workspace at ${kept}; a conversation keeps one workspace`);
      }
      return conversation;
    }
    // The same request id for a new conversation attaches to the conversation it made before.
    const earlier = input.requestId === undefined ? undefined : store.runs.conversationOfRequest(requestId);
    if (earlier !== undefined) return store.conversations.get(earlier);
    const agent = RunService.resolveAgent(store, input.agent);
    const reserved = this.takeNextNew(input.namespace, agent, workspace, input.permissions ?? []);
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: titleOf(input.prompt), workspace: workspace ?? null, ...(reserved === undefined ? {} : { reserved }) });
    input.onNewConversation?.(conversation.id);
    return conversation;
  }

  /** R7: the same request attaches to the run it admitted, here or in another Ward process. */
  private attach(store: NamespaceStore, run: Run): RunHandle {
    const local = this.active.get(run.id);
    if (local !== undefined) return { ...local.handle, attached: true };
    const first = store.journal.firstSeqOfRun(run.conversationId, run.id);
    const cursor = Math.max(0, (first ?? store.journal.lastSeq(run.conversationId) + 1) - 1);
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
}

function noSuchAgent(ns: Namespace, name: string): WardError {
  return new WardError('not_found', `no agent named ${name} in namespace ${ns.name}; create it with ${wardCommand(ns, `agents create ${name} --instructions-file FILE`)}`, { desktop: `There is no agent named ${name} in namespace ${ns.name}: create it ${ON_AGENTS}.` });
}

function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
