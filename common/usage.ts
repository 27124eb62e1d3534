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
  readonly at: string;
  readonly gateway: Tokens | null;
  readonly cli: Tokens | null;
  readonly cost: number | null;
  readonly total: number | null;
}

type Parsed = JournalEventBody | UnreadableEvent;

/** Where a conversation's usage fold stands: turns not yet finished, and the session's last total. */
export interface UsageState {
  readonly open: Readonly<Record<string, OpenTurn>>;
  readonly lastTotal: number | null;
  /** False while the events fed began mid-conversation and no total was seen yet: a first total's turn cost is then unknown. */
  readonly fromStart: boolean;
}

export const USAGE_START: UsageState = { open: {}, lastTotal: null, fromStart: true };

function closeTurn(runId: string, turn: OpenTurn): TurnUsage {
  const tokensFrom = turn.gateway !== null ? 'gateway' : turn.cli !== null ? 'cli' : null;
  return { runId, at: turn.at, tokens: turn.gateway ?? turn.cli ?? NO_TOKENS, tokensFrom, costUsd: turn.cost, sessionTotalUsd: turn.total };
}

/**
 * One event into the fold (pure: the desktop's timeline keeps the state); returns the next state
 * and, when the event ended a turn, that turn's usage. Events without a run id belong to no turn.
 */
export function foldUsage(state: UsageState, runId: string | null, createdAt: string, event: Parsed): [UsageState, TurnUsage | null] {
  if (runId === null || (event.type !== 'model_call' && event.type !== 'usage' && event.type !== 'run_finished')) return [state, null];
  // Run ids come from the journal (or a bundle): only own entries count, never a prototype's.
  const turn: OpenTurn = Object.hasOwn(state.open, runId) ? state.open[runId]! : { at: createdAt, gateway: null, cli: null, cost: null, total: null };
  const withTurn = (next: OpenTurn, rest: Partial<UsageState> = {}): [UsageState, null] => [{ ...state, ...rest, open: { ...state.open, [runId]: next } }, null];
  switch (event.type) {
    case 'model_call': {
      const { usage, path } = event.payload;
      // count_tokens answers measure a prompt; they are not tokens the model processed.
      if (usage === null || path.endsWith('/count_tokens')) return [state, null];
      return withTurn({ ...turn, gateway: addTokens(turn.gateway ?? NO_TOKENS, { input: usage.inputTokens, output: usage.outputTokens, cacheRead: usage.cacheReadTokens, cacheCreation: usage.cacheCreationTokens }) });
    }
    case 'usage': {
      const { inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, costUsd } = event.payload;
      const cli = { input: inputTokens, output: outputTokens, cacheRead: cacheReadTokens, cacheCreation: cacheCreationTokens };
      if (costUsd === null) return withTurn({ ...turn, cli });
      // A total lower than the last one is a new CLI session: its total is all this turn's.
      const last = state.lastTotal;
      const cost = last === null ? (state.fromStart ? money(costUsd) : null) : money(costUsd < last ? costUsd : costUsd - last);
      return withTurn({ ...turn, cli, cost, total: costUsd }, { lastTotal: costUsd, fromStart: true });
    }
    case 'run_finished': {
      const open = { ...state.open };
      delete open[runId];
      return [{ ...state, open }, closeTurn(runId, { ...turn, at: createdAt })];
    }
  }
}

/** The fold as an object, for readers that go through a journal once (`ward usage`, replay, exports). */
export class UsageTally {
  private state: UsageState;

  /** `fromStart` false: the events fed begin mid-conversation, so the first total's turn cost is unknown. */
  constructor(fromStart = true) {
    this.state = { ...USAGE_START, fromStart };
  }

  /** The usage of the turn this event ended, if it ended one. */
  add(runId: string | null, createdAt: string, event: Parsed): TurnUsage | null {
    const [next, turn] = foldUsage(this.state, runId, createdAt, event);
    this.state = next;
    return turn;
  }

  /** The usage so far of a turn not yet finished (what a `usage` event just added, for instance). */
  current(runId: string | null): TurnUsage | null {
    if (runId === null || !Object.hasOwn(this.state.open, runId)) return null;
    return closeTurn(runId, this.state.open[runId]!);
  }

  /** Turns the journal has not finished (a run still going, or cut short): their usage so far. */
  unfinished(): TurnUsage[] {
    const turns = Object.entries(this.state.open).map(([runId, turn]) => closeTurn(runId, turn));
    this.state = { ...this.state, open: {} };
    return turns;
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
