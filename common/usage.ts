/**
 * What a conversation's turns used and cost, folded from its journal: the same arithmetic for
 * `ward usage`, `ward replay`, exports and the desktop. Tokens per turn are what Ward's gateway
 * measured call by call (`model_call`, G4), or what the CLI reported at the turn's end (`usage`)
 * for turns the gateway did not see. Cost comes only from the CLI, which reports a running
 * total per session: a turn's cost is the difference to the total before it, and is known only
 * for a model the pinned CLI has prices for (model-catalog.ts); for any other the CLI's cost is
 * a default tier's guess, so the turn's cost is unknown and said to be.
 * Shared by main and the renderer: no Node, no Electron.
 */
import type { JournalEventBody, UnreadableEvent } from './events.js';
import { cliPricesModel } from './model-catalog.js';

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
  /** This turn's cost in USD (the session total's growth), when the CLI reported one for a model it has prices for. */
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
  /** The model the run asked for (its run_started); null when that event was not read. */
  readonly model: string | null;
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
  if (runId === null || (event.type !== 'run_started' && event.type !== 'model_call' && event.type !== 'usage' && event.type !== 'run_finished')) return [state, null];
  // Run ids come from the journal (or a bundle): only own entries count, never a prototype's.
  const turn: OpenTurn = Object.hasOwn(state.open, runId) ? state.open[runId]! : { at: createdAt, model: null, gateway: null, cli: null, cost: null, total: null };
  const withTurn = (next: OpenTurn, rest: Partial<UsageState> = {}): [UsageState, null] => [{ ...state, ...rest, open: { ...state.open, [runId]: next } }, null];
  switch (event.type) {
    case 'run_started':
      return withTurn({ ...turn, model: event.payload.model });
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
      const growth = last === null ? (state.fromStart ? money(costUsd) : null) : money(costUsd < last ? costUsd : costUsd - last);
      // The total still moves on: the next turn's cost is its growth from here.
      const cost = turn.model !== null && cliPricesModel(turn.model) ? growth : null;
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
    // A run that has only started has used nothing yet.
    const turns = Object.entries(this.state.open)
      .filter(([, turn]) => turn.gateway !== null || turn.cli !== null)
      .map(([runId, turn]) => closeTurn(runId, turn));
    this.state = { ...this.state, open: {} };
    return turns;
  }
}

/** Sums of several turns; cost is null only when no turn's cost is known. */
export interface UsageTotal {
  readonly turns: number;
  readonly tokens: Tokens;
  /** The sum of the turns whose cost is known. */
  readonly costUsd: number | null;
  /** Turns that used tokens but whose cost is unknown: left out of `costUsd`. */
  readonly unpricedTurns: number;
}

export const NO_USAGE: UsageTotal = { turns: 0, tokens: NO_TOKENS, costUsd: null, unpricedTurns: 0 };

export function addTurn(total: UsageTotal, turn: Pick<TurnUsage, 'tokens' | 'costUsd'>): UsageTotal {
  return {
    turns: total.turns + 1,
    tokens: addTokens(total.tokens, turn.tokens),
    costUsd: turn.costUsd === null ? total.costUsd : money((total.costUsd ?? 0) + turn.costUsd),
    unpricedTurns: total.unpricedTurns + (turn.costUsd === null && totalTokens(turn.tokens) > 0 ? 1 : 0),
  };
}

/**
 * A token count with thousands commas, as Intl's en-US format writes it: by hand, because an
 * Intl.NumberFormat costs 20-40 ms to create (ICU's locale data), before every `ward run`'s spawn
 * when it was made as this module loaded (issue 29). Token counts are whole numbers.
 */
export function groupThousands(count: number): string {
  return String(Math.round(count)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function dollars(usd: number): string {
  return `$${usd.toFixed(4)}`;
}

/** "1,234 in · 56 out · 7,890 cache tokens". */
export function describeTokens(tokens: Tokens): string {
  const cache = tokens.cacheRead + tokens.cacheCreation;
  const parts = [`${groupThousands(tokens.input)} in`, `${groupThousands(tokens.output)} out`];
  if (cache > 0) parts.push(`${groupThousands(cache)} cache`);
  return `${parts.join(' · ')} tokens`;
}

/** One turn: "1,234 in · 56 out · 7,890 cache tokens · $0.0123", or "· cost unknown", never a guess. */
export function describeUsage(tokens: Tokens, costUsd: number | null): string {
  return `${describeTokens(tokens)} · ${costUsd === null ? 'cost unknown' : dollars(costUsd)}`;
}

/** "1 turn", "2 turns". */
export function turnCount(turns: number): string {
  return `${turns} turn${turns === 1 ? '' : 's'}`;
}

/** The cost of several turns: "$0.0123", "$0.0123 + cost unknown for 2 turns", "cost unknown for 2 turns"; null for none. */
export function describeTotalCost(total: UsageTotal): string | null {
  const unknown = total.unpricedTurns === 0 ? null : `cost unknown for ${turnCount(total.unpricedTurns)}`;
  if (total.costUsd === null) return unknown;
  return unknown === null ? dollars(total.costUsd) : `${dollars(total.costUsd)} + ${unknown}`;
}

/** Several turns: their tokens and what is known of their cost. */
export function describeTotal(total: UsageTotal): string {
  const cost = describeTotalCost(total);
  return `${describeTokens(total.tokens)}${cost === null ? '' : ` · ${cost}`}`;
}

/** A reading's closing line: "Total: 2 turns, 240 in · 60 out tokens · $0.0050". */
export function totalLine(total: UsageTotal, label = 'Total'): string {
  return `${label}: ${turnCount(total.turns)}, ${describeTotal(total)}`;
}
