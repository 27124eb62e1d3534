/**
 * What a conversation's turns used and cost, folded from its journal: the same arithmetic for
 * `ward usage`, `ward replay`, exports and the desktop. Tokens per turn are what Ward's gateway
 * measured call by call (`model_call`, G4), or what the CLI reported at the turn's end (`usage`)
 * for turns the gateway did not see. Cost comes only from the CLI, which reports a running
 * total per session: a turn's cost is the difference to the total before it.
 * Shared by main and the renderer: no Node, no Electron.
 */
import type { JournalEventBody, UnreadableEvent } from './events.js';

export interface Tokens {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheCreation: number;
}

export const NO_TOKENS: Tokens = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };

/** One turn's usage, known once its run finished (or the journal ended). */
export interface TurnUsage {
  readonly runId: string | null;
  /** When the turn ended (its run_finished), or its last usage event. */
  readonly at: string;
  readonly tokens: Tokens;
  /** Where the tokens come from; null when neither reported any. */
  readonly tokensFrom: 'gateway' | 'cli' | null;
  /** This turn's cost in USD (the session total's growth), when the CLI reported one. */
  readonly costUsd: number | null;
  /** The session's running total after this turn, as the CLI reported it. */
  readonly sessionTotalUsd: number | null;
}

export function addTokens(a: Tokens, b: Tokens): Tokens {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheCreation: a.cacheCreation + b.cacheCreation };
}

export function totalTokens(tokens: Tokens): number {
  return tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation;
}

/** Cents of a cent are noise from subtracting two floating totals. */
function money(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

interface OpenTurn {
  at: string;
  gateway: Tokens | null;
  cli: Tokens | null;
  cost: number | null;
  total: number | null;
}

type Parsed = JournalEventBody | UnreadableEvent;

/**
 * Feed it a conversation's events in order; it hands back each turn's usage as the turn ends.
 * Turns are keyed by run id; events without one are not part of a turn.
 */
export class UsageTally {
  private readonly open = new Map<string, OpenTurn>();
  private lastTotal: number | null = null;

  /** `fromStart` false: the events fed begin mid-conversation, so the first total's turn cost is unknown. */
  constructor(private fromStart = true) {}

  /** The usage of the turn this event ended, if it ended one. */
  add(runId: string | null, createdAt: string, event: Parsed): TurnUsage | null {
    if (runId === null) return null;
    switch (event.type) {
      case 'model_call': {
        const { usage, path } = event.payload;
        // count_tokens answers measure a prompt; they are not tokens the model processed.
        if (usage === null || path.endsWith('/count_tokens')) return null;
        const turn = this.turn(runId, createdAt);
        turn.gateway = addTokens(turn.gateway ?? NO_TOKENS, { input: usage.inputTokens, output: usage.outputTokens, cacheRead: usage.cacheReadTokens, cacheCreation: usage.cacheCreationTokens });
        return null;
      }
      case 'usage': {
        const { inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, costUsd } = event.payload;
        const turn = this.turn(runId, createdAt);
        turn.cli = { input: inputTokens, output: outputTokens, cacheRead: cacheReadTokens, cacheCreation: cacheCreationTokens };
        if (costUsd !== null) {
          // A total lower than the last one is a new CLI session: its total is all this turn's.
          if (this.lastTotal === null) turn.cost = this.fromStart ? money(costUsd) : null;
          else turn.cost = money(costUsd < this.lastTotal ? costUsd : costUsd - this.lastTotal);
          turn.total = costUsd;
          this.lastTotal = costUsd;
          this.fromStart = true;
        }
        return null;
      }
      case 'run_finished': {
        const turn = this.turn(runId, createdAt);
        this.open.delete(runId);
        return this.close(runId, { ...turn, at: createdAt });
      }
      default:
        return null;
    }
  }

  /** The usage so far of a turn not yet finished (what a `usage` event just added, for instance). */
  current(runId: string | null): TurnUsage | null {
    const turn = runId === null ? undefined : this.open.get(runId);
    return turn === undefined ? null : this.close(runId!, turn);
  }

  /** Turns the journal has not finished (a run still going, or cut short): their usage so far. */
  unfinished(): TurnUsage[] {
    const turns = [...this.open].map(([runId, turn]) => this.close(runId, turn));
    this.open.clear();
    return turns;
  }

  private turn(runId: string, at: string): OpenTurn {
    let turn = this.open.get(runId);
    if (turn === undefined) {
      turn = { at, gateway: null, cli: null, cost: null, total: null };
      this.open.set(runId, turn);
    }
    return turn;
  }

  private close(runId: string, turn: OpenTurn): TurnUsage {
    const tokensFrom = turn.gateway !== null ? 'gateway' : turn.cli !== null ? 'cli' : null;
    return { runId, at: turn.at, tokens: turn.gateway ?? turn.cli ?? NO_TOKENS, tokensFrom, costUsd: turn.cost, sessionTotalUsd: turn.total };
  }
}

/** Sums of several turns; cost is null only when no turn reported one. */
export interface UsageTotal {
  readonly turns: number;
  readonly tokens: Tokens;
  readonly costUsd: number | null;
}

export const NO_USAGE: UsageTotal = { turns: 0, tokens: NO_TOKENS, costUsd: null };

export function addTurn(total: UsageTotal, turn: Pick<TurnUsage, 'tokens' | 'costUsd'>): UsageTotal {
  return {
    turns: total.turns + 1,
    tokens: addTokens(total.tokens, turn.tokens),
    costUsd: turn.costUsd === null ? total.costUsd : money((total.costUsd ?? 0) + turn.costUsd),
  };
}

const grouped = new Intl.NumberFormat('en-US');

/** "1,234 in · 56 out · 7,890 cache tokens · $0.0123" (cost left out when unknown). */
export function describeUsage(tokens: Tokens, costUsd: number | null): string {
  const cache = tokens.cacheRead + tokens.cacheCreation;
  const parts = [`${grouped.format(tokens.input)} in`, `${grouped.format(tokens.output)} out`];
  if (cache > 0) parts.push(`${grouped.format(cache)} cache`);
  return `${parts.join(' · ')} tokens${costUsd === null ? '' : ` · $${costUsd.toFixed(4)}`}`;
}
