import type { ElicitationReply, ElicitationRequest } from '../upstreams/elicitation.js';
import type { GrantKind } from './grants.js';

/** The person's answer (P3). Dismissing, a bad answer and silence all count as deny. */
export type PromptAnswer = 'once' | 'conversation' | 'always' | 'deny';
export const PROMPT_ANSWERS: readonly PromptAnswer[] = ['once', 'conversation', 'always', 'deny'];

export interface PromptQuestion {
  readonly tool: string;
  readonly kind: GrantKind;
  /** What would be granted (a path, host:port, command, env name, connection/tool). */
  readonly value: string;
  /** Bounded and redacted; still untrusted text (it comes from the model): escape before showing. */
  readonly argumentsSummary: string;
  /** A Bash call's whole command line, already made showable (showCommand, redacted): show it whole. */
  readonly command?: string;
  /** Why the grants did not settle it. */
  readonly reason: string;
  readonly agent: string;
  readonly namespace: string;
  /** The conversation and run that ask, so a window shows the question in the right chat. */
  readonly conversationId?: string | null;
  readonly runId?: string | null;
  /** The answers this question accepts; a compound command can only be allowed once. */
  readonly choices: readonly PromptAnswer[];
  /** When the question times out (epoch ms) and counts as a deny; set by the run that asks. */
  readonly expiresAt?: number;
}

/** How a question reads to the person: "wants to VERB value". */
export const PROMPT_VERB: Readonly<Record<GrantKind, string>> = {
  read: 'read',
  write: 'write',
  net: 'connect to',
  run: 'run',
  env: 'read the environment variable',
  mcp: 'call the tool',
};

/** An upstream server asks the person for input during a tool call (MCP elicitation). */
export interface ElicitationQuestion {
  /** The connection or inline upstream that asks. */
  readonly server: string;
  readonly agent: string;
  readonly namespace: string;
  readonly conversationId?: string | null;
  readonly runId?: string | null;
  /** Checked and bounded (main/upstreams/elicitation.ts); its text is still the server's: escape before showing. */
  readonly request: ElicitationRequest;
}

/**
 * Asks a person. Swappable: a terminal for `ward run` on a TTY, the desktop UI through the
 * core, or no one. Must settle (or be abandoned) when `signal` aborts: the caller times out.
 */
export interface Prompter {
  /** False when no one can answer: the question is not asked and the request is denied. */
  readonly interactive: boolean;
  ask(question: PromptQuestion, signal: AbortSignal): Promise<PromptAnswer>;
  /**
   * Shows a server's form (defaults filled in) or its URL, with accept, decline and cancel. An
   * accepted URL is opened only then, by the prompter. Absent: elicitations are declined.
   */
  elicit?(question: ElicitationQuestion, signal: AbortSignal): Promise<ElicitationReply>;
}

/** For non-interactive runs: never asks, so everything the grants do not cover is denied. */
export const noOnePrompter: Prompter = {
  interactive: false,
  ask: () => Promise.resolve('deny'),
};
