/**
 * Warm sessions (issue 19): after a turn, the desktop keeps its conversation's CLI process
 * running, so the next turn writes one line to it instead of starting the CLI, its MCP
 * connection and its sandbox again. A session is used again only by the next turn of the same
 * conversation whose launch would be the same (agent version, grants, environment, files, hosts:
 * the fingerprint); otherwise, and after `warmSessionMinutes` (settings.json) without a turn, it
 * is closed and the next turn starts a CLI that resumes the conversation by its session id (R4),
 * with fresh capabilities. At most MAX_WARM_SESSIONS are kept (a waiting CLI holds about 200 MB);
 * the least recently used goes.
 */
import type { Namespace } from '../../namespaces/namespace.js';
import type { CliSession } from './cli-session.js';

export const MAX_WARM_SESSIONS = 2;

/** A warm session belongs to one conversation of one namespace. */
export function warmKey(namespace: Namespace, conversationId: string): string {
  return `${namespace.name}/${conversationId}`;
}

/** A session can take a turn only with the launch it was started with, if it saw the conversation's previous run. */
function fits(session: CliSession, fingerprint: string, previousRunId: string | null): boolean {
  return session.usable && session.fingerprint === fingerprint && session.lastRunId === previousRunId;
}

interface Kept {
  readonly session: CliSession;
  readonly timer: NodeJS.Timeout;
}

export class WarmSessions {
  /** In use order: the first is the least recently used. */
  private readonly kept = new Map<string, Kept>();
  private readonly watched = new WeakSet<CliSession>();
  /** Sessions being started ahead of their turn (./prestart.ts): a turn of the conversation waits for it. */
  private readonly starting = new Map<string, Promise<void>>();
  private closed = false;
  /** Sessions that finished starting after closeAll began: it waits for them to close too. */
  private readonly closedLate: Promise<void>[] = [];

  /** @param graceMs how long a closing CLI may take to exit after its stdin closes (Stop's grace period). */
  constructor(private readonly graceMs: number) {}

  /**
   * The conversation's kept session when it can take a turn launched as `fingerprint` whose
   * conversation's previous run was `previousRunId`; a session that cannot (changed launch, dead
   * CLI, a turn it did not see, or `current` says its set-up is out of date) is closed first, so
   * the next CLI resumes a complete transcript.
   */
  async take(key: string, fingerprint: string, previousRunId: string | null, current: (session: CliSession) => Promise<boolean> = async () => true): Promise<CliSession | undefined> {
    await this.starting.get(key);
    const kept = this.kept.get(key);
    if (kept === undefined) return undefined;
    this.kept.delete(key);
    clearTimeout(kept.timer);
    const { session } = kept;
    if (fits(session, fingerprint, previousRunId) && (await current(session))) return session;
    await session.close(this.graceMs);
    return undefined;
  }

  /**
   * Whether the conversation's kept session would take its next turn (take() would return it); a
   * kept session that would not is closed now, before another CLI resumes the same session.
   */
  async keptTakesNext(key: string, fingerprint: string, previousRunId: string | null): Promise<boolean> {
    const kept = this.kept.get(key);
    if (kept === undefined) return false;
    if (fits(kept.session, fingerprint, previousRunId)) return true;
    await this.drop(key, kept.session);
    return false;
  }

  /** Whether a session is being started ahead for the conversation. */
  isStarting(key: string): boolean {
    return this.starting.has(key);
  }

  /**
   * Runs `start`, which keeps a session for the conversation's next turn, while a turn of that
   * conversation waits for it in take(). Resolves when it is done; a failure only means the turn starts its own CLI.
   */
  async startAhead(key: string, start: () => Promise<void>): Promise<void> {
    const started = start().finally(() => this.starting.delete(key));
    this.starting.set(key, started.catch(() => undefined));
    await started;
  }

  /** Keeps a session for the conversation's next turn, for `idleMs`. */
  keep(key: string, session: CliSession, idleMs: number): void {
    if (this.closed) {
      this.closedLate.push(session.close(this.graceMs));
      return;
    }
    // One the conversation had (its CLI died, not yet closed) goes now.
    const replaced = this.kept.get(key);
    if (replaced !== undefined && replaced.session !== session) void this.drop(key, replaced.session);
    const timer = setTimeout(() => void this.drop(key, session), idleMs);
    // An idle session never holds Ward open: app close or process exit ends it.
    timer.unref();
    this.kept.set(key, { session, timer });
    // A CLI that dies between turns is closed when noticed (its folder and capabilities go).
    if (!this.watched.has(session)) {
      this.watched.add(session);
      void session.exited?.then(() => this.drop(key, session));
    }
    for (const [oldest, { session: evicted }] of this.kept) {
      if (this.kept.size <= MAX_WARM_SESSIONS) break;
      void this.drop(oldest, evicted);
    }
  }

  /** Closes the conversation's kept session, if any; one still starting ahead is closed once started. */
  async discard(key: string): Promise<void> {
    await this.starting.get(key);
    const kept = this.kept.get(key);
    if (kept !== undefined) await this.drop(key, kept.session);
  }

  /** Closes every kept session and keeps no more (Ward is exiting); a session still starting is closed once started. */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all(this.starting.values());
    await Promise.all(this.closedLate);
    const all = [...this.kept.entries()];
    await Promise.all(all.map(([key, { session }]) => this.drop(key, session)));
  }

  /** Closes a session that is kept (one a turn has taken is the turn's to close). */
  private async drop(key: string, session: CliSession): Promise<void> {
    const kept = this.kept.get(key);
    if (kept?.session !== session) return;
    clearTimeout(kept.timer);
    this.kept.delete(key);
    await session.close(this.graceMs);
  }
}
