/**
 * A conversation's CLI started before its turn (issue 19): when the person starts writing in a
 * chat, the desktop starts that chat's CLI — resuming its session, with the launch its next turn
 * would use — and keeps it as the conversation's warm session, so the message they send goes to a
 * CLI that is already running.
 *
 * Nothing is journaled and nobody is asked: no turn is bound until the message is sent, so every
 * tool call, approval, host and model call the CLI tried before then would be refused
 * (./cli-session.ts). The pinned CLI tries none: it waits for its first stream-json message, and
 * sends its `system/init` (which the turn checks, R3) only then. A chat whose launch needs a
 * decision first (an environment grant is decided and journaled per turn) is not started ahead.
 */
import { randomUUID } from 'node:crypto';
import type { Namespace } from '../../namespaces/namespace.js';
import type { NamespaceStore } from '../../store/namespace-store.js';
import { CliSession } from './cli-session.js';
import type { Rule } from '../../permissions/grants.js';
import type { Conversation } from '../../store/conversations.js';
import { conversationPlan, launchSpec, openSessionTools, planFor, runPermissions, startSession, type ConversationPlan, type Plan } from './launch.js';
import { checkReadiness } from './readiness.js';
import type { TurnDeps } from './turn-deps.js';
import { warmKey, type WarmSessions } from './warm-sessions.js';

/** What a request to start a chat's CLI ahead did. */
export type PrestartOutcome =
  | 'started'
  /** The chat's CLI is already running (kept from its last turn with the same launch, or being started). */
  | 'running'
  /** A turn holds the conversation (or an uncertain run waits to be recorded). */
  | 'busy'
  /** warmSessionMinutes is 0, or this chat's launch asks something of the person first. */
  | 'not_ahead';

export interface PrestartTarget {
  readonly namespace: Namespace;
  readonly store: NamespaceStore;
  readonly conversationId: string;
}

/** Starts the conversation's CLI and keeps it for its next turn; a failure is for that turn to report, so it only rejects. */
export async function prestartSession(deps: TurnDeps, warm: WarmSessions, target: PrestartTarget): Promise<PrestartOutcome> {
  const { namespace: ns, store, conversationId } = target;
  const key = warmKey(ns, conversationId);
  if (deps.limits().warmSessionMs <= 0) return 'not_ahead';
  if (warm.isStarting(key)) return 'running';
  if (store.runs.activeFor(conversationId) !== undefined) return 'busy';
  // The transcript this CLI will load ends with the newest run now: a turn run elsewhere later makes it stale (take() checks).
  const lastRunId = store.runs.latestId(conversationId);
  return startAhead(deps, warm, { ...target, key, lastRunId, base: () => conversationPlan(deps, store, ns, conversationId), rules: [] });
}

/**
 * Starts a CLI for a conversation not made yet (the `ward` service, issue 29): the next new
 * conversation with this agent version, workspace and grants takes `draft`'s ids (RunService)
 * and so this CLI. Until then it belongs to no conversation and can do nothing (no turn is bound).
 */
export async function prestartNewSession(deps: TurnDeps, warm: WarmSessions, target: { readonly namespace: Namespace; readonly store: NamespaceStore; readonly draft: Conversation; readonly rules: readonly Rule[] }): Promise<PrestartOutcome> {
  const { namespace: ns, store, draft, rules } = target;
  if (deps.limits().warmSessionMs <= 0) return 'not_ahead';
  return startAhead(deps, warm, { namespace: ns, store, key: warmKey(ns, draft.id), conversationId: draft.id, lastRunId: null, base: () => planFor(deps, store, ns, draft), rules });
}

interface AheadTarget extends PrestartTarget {
  readonly key: string;
  readonly lastRunId: string | null;
  readonly base: () => ConversationPlan;
  /** The grants its turn will be given (`ward run --allow-…`); the fingerprint holds them. */
  readonly rules: readonly Rule[];
}

async function startAhead(deps: TurnDeps, warm: WarmSessions, target: AheadTarget): Promise<PrestartOutcome> {
  const { namespace: ns, store, conversationId, key, lastRunId, rules } = target;
  const limits = deps.limits();
  let outcome: PrestartOutcome = 'started';
  await warm.startAhead(key, async () => {
    const base = target.base();
    // The broker and gateway know the process by this id until its first turn binds (each turn journals its own run id).
    const registrationId = randomUUID();
    const permissions = runPermissions(deps, base, { namespace: ns, store, conversationId, runId: registrationId, rules }, () => undefined);
    try {
      // Decided before anything is read or started: such a chat is not started ahead at all.
      if (permissions.currentRules().some((rule) => rule.kind === 'env' && rule.effect === 'allow')) {
        outcome = 'not_ahead';
        return;
      }
      deps.sandbox.prewarm();
      const secrets: string[] = [];
      const { pinned, access } = await checkReadiness(deps, ns, base.spec, base.profile, (value) => secrets.push(value));
      const plan: Plan = { ...base, pinned, access, limits, warm: true };
      const spec = await launchSpec(deps, plan, permissions, (value) => secrets.push(value));
      // The kept CLI takes the next turn if its launch is still this one; one started before a grant,
      // setting or agent changed (or a turn elsewhere) would be closed by that turn: replace it now.
      if (await warm.keptTakesNext(key, spec.fingerprint, lastRunId)) {
        outcome = 'running';
        return;
      }
      const session = new CliSession(spec.fingerprint, registrationId);
      session.lastRunId = lastRunId;
      for (const secret of secrets) session.addSecret(secret);
      try {
        await openSessionTools(deps, ns, plan, session, () => undefined);
        session.spawn(await startSession(deps, plan, spec, session));
        if (spec.servesTools) void deps.broker().then((broker) => broker.prepareSessions?.()).catch(() => undefined);
      } catch (error) {
        await session.close();
        throw error;
      }
      warm.keep(key, session, limits.warmSessionMs);
    } finally {
      permissions.close();
    }
  });
  return outcome;
}
