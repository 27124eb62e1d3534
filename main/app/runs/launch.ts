/**
 * How a conversation's CLI is started, shared by a turn (./turn.ts) and by a session started ahead
 * of the turn that will use it (./prestart.ts), so both compute the same launch and fingerprint:
 *   conversationPlan — the conversation's agent version, model profile, folders and session flag
 *   launchSpec       — argv, allowlisted env (R2, R3), sandbox files and hosts, and their fingerprint
 *   openSessionTools — the upstreams (B3), the gateway's capability (G1) and, for MCP tools, the broker's (B1)
 *   startSession     — the private run folder with mcp.json (B2) and the sandbox around the command
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { traceMark } from '../../base/trace.js';
import { parseAgentSpec, toolRoute, type AgentSpec } from '../../agents/spec.js';
import { openRunTools } from '../../agents/run-tools.js';
import type { Namespace } from '../../namespaces/namespace.js';
import type { AuditSink } from '../../permissions/audit.js';
import type { Prompter } from '../../permissions/prompter.js';
import { GrantStore } from '../../permissions/grant-store.js';
import type { Rule } from '../../permissions/grants.js';
import { pinnedToolRules } from '../../permissions/native-tools.js';
import { looksLikeSecretName } from '../../permissions/env-grants.js';
import { RunPermissions } from '../../permissions/run-permissions.js';
import { ungrantedToolsNote } from '../../permissions/ungranted-tools.js';
import { assertConnectionAllowed, policyGate } from '../../policy/policy.js';
import { resolveModelProfile, type ModelProfile } from '../../providers/model-profile.js';
import { buildCliArgs, mcpToolName } from '../../runner/argv.js';
import type { CliLaunch } from '../../runner/child.js';
import { buildChildEnv } from '../../runner/env.js';
import type { PinnedCli } from '../../runner/pin.js';
import { createRunDir } from '../../runner/run-dir.js';
import { adoptTranscript, nativeTranscriptExists } from '../../runner/transcript.js';
import { programFolders } from '../../sandbox/engine.js';
import { sandboxGrants, wardPrivatePaths, type RunFiles } from '../../sandbox/files.js';
import { guardedFolders } from '../../sandbox/program-view.js';
import type { Conversation } from '../../store/conversations.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import type { PinnedToolRoute } from '../../upstreams/types.js';
import { pendingFork, type CliFork } from '../conversation-rewind.js';
import type { RunLimits } from '../run-limits.js';
import type { CliSession } from './cli-session.js';
import type { ProviderAccess } from './provider-access.js';
import type { TurnDeps } from './turn-deps.js';
import { claudeConfigDir, conversationWorkspace, sharedClaudeConfigDir } from './workspace.js';

/** What a conversation's next CLI runs, read from the store (nothing checked or started yet). */
export interface ConversationPlan {
  readonly conversation: Conversation;
  readonly agentName: string;
  readonly spec: AgentSpec;
  readonly profile: ModelProfile;
  readonly resume: boolean;
  /** A rewound conversation's first turn forks the session it was rewound in (./conversation-rewind.ts). */
  readonly fork: CliFork | null;
  readonly workspace: string;
  readonly configDir: string;
  readonly routes: readonly PinnedToolRoute[];
}

/** A conversation plan checked (pin, policy, credential) and ready to launch. */
export interface Plan extends ConversationPlan {
  readonly pinned: PinnedCli;
  readonly access: ProviderAccess;
  /** Read before anything starts: a malformed settings.json fails the turn with nothing started. */
  readonly limits: RunLimits;
  /** Whether the CLI reads stream-json turns and may stay warm after one (issue 19). */
  readonly warm: boolean;
}

/** How the CLI is started, and the fingerprint a kept warm session must match to take a turn instead. */
export interface LaunchSpec {
  readonly fingerprint: string;
  args(paths: { mcpConfigPath: string; instructionsPath: string }): string[];
  env(model: { baseUrl: string; capability: string }): Record<string, string>;
  /** The sandbox's files, but for the run folder (made only for a new CLI). */
  readonly files: Omit<RunFiles, 'readOnly'>;
  /** The run's net grants (the broker's and the gateway's hosts are added for a new CLI). */
  readonly hosts: readonly string[];
  readonly expectedTools: readonly string[];
  /** Whether the CLI gets Ward's MCP server (the agent has MCP tools): without, nothing of the broker is handed to the child. */
  readonly servesTools: boolean;
  /** The agent's instructions and Ward's note on the native tools this run leaves out. */
  readonly instructions: string;
}

export function conversationPlan(deps: TurnDeps, store: NamespaceStore, ns: Namespace, conversationId: string): ConversationPlan {
  return planFor(deps, store, ns, store.conversations.get(conversationId));
}

/** The same for a conversation given whole: one stored, or one a CLI is started ahead for before it is (./prestart.ts). */
export function planFor(deps: TurnDeps, store: NamespaceStore, ns: Namespace, conversation: Conversation): ConversationPlan {
  const agentVersion = store.agents.getById(conversation.agentId, conversation.agentVersion);
  const spec = parseAgentSpec(agentVersion.spec);
  const profile = resolveModelProfile(deps.home, ns, spec.modelProfile, deps.env);
  const configDir = claudeConfigDir(deps.home, ns, conversation.id);
  // A conversation from before each had its own CLI state takes its transcript along.
  adoptTranscript(sharedClaudeConfigDir(deps.home, ns), configDir, conversation.cliSessionId);
  // Resume once the CLI persisted the session; a confirmed session whose transcript is gone
  // still resumes, so the CLI's "No conversation found" fails the turn visibly (R4).
  const resume = conversation.sessionStarted || nativeTranscriptExists(configDir, conversation.cliSessionId);
  const fork = resume ? null : pendingFork(store, conversation);
  const workspace = conversationWorkspace(deps.home, ns, conversation);
  return { conversation, agentName: agentVersion.agentName, spec, profile, resume, fork, workspace, configDir, routes: spec.tools.map(toolRoute) };
}

/** Whether the conversation's CLI gets Ward's MCP server: only an agent with MCP tools needs the broker. */
export function servesTools(plan: ConversationPlan): boolean {
  return plan.routes.length > 0;
}

/** The permissions a turn of the conversation runs with (P1–P4): its flags', the agent's, the chat's and the policy's say. */
export function runPermissions(
  deps: TurnDeps,
  plan: ConversationPlan,
  turn: { readonly namespace: Namespace; readonly store: NamespaceStore; readonly conversationId: string; readonly runId: string; readonly rules: readonly Rule[]; readonly prompter?: Prompter },
  audit: AuditSink,
): RunPermissions {
  return new RunPermissions({
    baseDir: plan.workspace,
    rules: [...pinnedToolRules(plan.routes), ...turn.rules],
    gate: policyGate(deps.policy),
    grants: new GrantStore(turn.store.db),
    conversationId: turn.conversationId,
    agentId: plan.conversation.agentId,
    agentName: plan.agentName,
    namespace: turn.namespace.name,
    routes: plan.routes,
    runId: turn.runId,
    prompter: turn.prompter ?? deps.prompter,
    promptTimeoutMs: deps.promptTimeoutMs,
    audit,
  });
}

/** Argv, environment, sandbox files and hosts from the plan and the run's permissions (P1–P4, S4). */
export async function launchSpec(deps: TurnDeps, plan: Plan, permissions: RunPermissions, onSecretEnv: (value: string) => void): Promise<LaunchSpec> {
  const cliPermissions = permissions.cliOptions();
  // S4: no credential in the child: the gateway's URL and this run's capability in the variable of the credential's mode.
  const granted = await permissions.grantedEnv(deps.env);
  for (const [name, value] of Object.entries(granted)) if (looksLikeSecretName(name)) onSecretEnv(value);
  const argsWith = (paths: { mcpConfigPath: string; instructionsPath: string }, fork: CliFork | null) =>
    buildCliArgs({
      sessionId: plan.conversation.cliSessionId,
      resume: plan.resume,
      fork,
      ...paths,
      model: plan.profile.model,
      pinnedTools: plan.routes.map((route) => route.exposedName),
      nativeTools: cliPermissions.tools,
      allowedRules: cliPermissions.allowedTools,
      disallowedRules: cliPermissions.disallowedTools,
      askTools: cliPermissions.askTools,
    });
  const args = (paths: { mcpConfigPath: string; instructionsPath: string }) => argsWith(paths, plan.fork);
  const env = (model: { baseUrl: string; capability: string }) =>
    buildChildEnv({ inherited: deps.env, model: { ...model, mode: plan.access.childMode }, configDir: plan.configDir, granted });
  const files = {
    programs: programFolders(plan.pinned.path, guardedFolders(deps.home, deps.env, os.homedir())),
    writable: [plan.workspace, plan.configDir],
    grants: sandboxGrants(permissions.currentRules()),
    hidden: wardPrivatePaths(deps.home, deps.env),
  };
  const hosts = permissions.sandboxHosts();
  // Everything the child is started with but the paths and capabilities a new CLI gets: a
  // changed grant, agent version, setting or environment value means a new CLI (issue 19).
  const fingerprint = createHash('sha256')
    .update(
      JSON.stringify({
        cli: [plan.pinned.path, plan.pinned.version],
        agent: [plan.conversation.agentId, plan.conversation.agentVersion, plan.spec.instructions],
        // The session flag differs between a first and a later turn; the warm process is past it.
        // So is a rewound conversation's fork: the CLI that made it takes the next turn too.
        args: argsWith({ mcpConfigPath: '', instructionsPath: '' }, null).filter((arg) => arg !== '--resume' && arg !== '--session-id'),
        env: env({ baseUrl: '', capability: '' }),
        provider: plan.profile.baseUrl,
        cwd: plan.workspace,
        files,
        hosts,
        sandboxed: deps.sandboxStatus.confined,
      }),
    )
    .digest('hex');
  const expectedTools = [...plan.routes.map((route) => mcpToolName(route.exposedName)), ...cliPermissions.tools];
  // The model learns why a tool is missing instead of only the CLI's "No such tool available".
  const note = ungrantedToolsNote(cliPermissions.tools);
  const instructions = note === null ? plan.spec.instructions : `${plan.spec.instructions}\n\n${note}\n`;
  return { fingerprint, args, env, files, hosts, expectedTools, servesTools: servesTools(plan), instructions };
}

/**
 * A new CLI's upstreams and capabilities: refuses the run if a pinned tool is gone (B3). What the
 * upstreams read and the capabilities are redacted from the journal of every turn the session
 * takes (C3): the session keeps them, `onSecret` is told them too.
 */
export async function openSessionTools(deps: TurnDeps, ns: Namespace, plan: Plan, session: CliSession, onSecret: (value: string) => void): Promise<void> {
  const secret = (value: string) => {
    session.addSecret(value);
    onSecret(value);
  };
  const elicit = (server: string) => session.elicitor(server);
  session.upstreams = await openRunTools(plan.spec, {
    env: deps.env,
    ...(deps.upstreamOptions === undefined ? {} : { upstreamOptions: deps.upstreamOptions }),
    openConnections: () => deps.openConnections(ns, secret, elicit),
    elicit,
    agentLabel: `agent ${plan.agentName}@${plan.conversation.agentVersion}`,
    namespace: ns,
    checkConnection: (name, server) => assertConnectionAllowed(deps.policy, name, server),
  });
  const [broker, gateway] = await Promise.all([servesTools(plan) ? deps.broker() : null, deps.gateway]);
  traceMark('services-awaited');
  if (broker !== null) {
    session.registration = broker.register(session.binding(plan.routes));
    secret(session.registration.capability);
  }
  // G1, G3: the real credential stays here; the child gets the gateway and a run capability.
  session.gatewayRoute = gateway.register(session.route(plan.profile.baseUrl, plan.access.refresh !== undefined));
  secret(session.gatewayRoute.capability);
  traceMark('tools-open');
}

/** A new CLI's run folder, argv, environment and sandbox: what to spawn (without a prompt). */
export async function startSession(deps: TurnDeps, plan: Plan, spec: LaunchSpec, session: CliSession): Promise<CliLaunch> {
  const registration = session.registration;
  const gateway = session.gatewayRoute!;
  traceMark('launch');
  const runDir = createRunDir({ broker: registration === undefined ? null : { url: registration.url, capability: registration.capability }, instructions: spec.instructions, tmpRoot: deps.tmpRoot });
  session.runDir = runDir;
  fs.mkdirSync(plan.workspace, { recursive: true, mode: 0o700 });
  fs.mkdirSync(plan.configDir, { recursive: true, mode: 0o700 });
  const args = spec.args({ mcpConfigPath: runDir.mcpConfigPath, instructionsPath: runDir.instructionsPath });
  const env = spec.env({ baseUrl: gateway.url, capability: gateway.capability });
  const command = { binary: plan.pinned.path, args, env, cwd: plan.workspace };
  session.sandboxed = await deps.sandbox.launch({
    command,
    files: { ...spec.files, readOnly: [runDir.dir] },
    // S3: the gateway and, serving tools, the broker (loopback, this process) and the run's net grants; any other host is decided as it is tried.
    allowedHosts: [...(registration === undefined ? [] : [new URL(registration.url).host]), new URL(gateway.url).host, ...spec.hosts],
    decideHost: (question) => session.decideHost(question),
  });
  traceMark('sandbox-ready');
  return { ...(session.sandboxed ?? command), maxLineBytes: deps.maxLineBytes };
}
