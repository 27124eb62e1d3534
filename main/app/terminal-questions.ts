/**
 * The questions a turn asks a person (P3) and the terminal that answers them, for adapters: the
 * `ward` service hands each turn's questions to the `ward run` that started it, which asks them
 * at its own terminal. Kept apart from the app so that client loads only this.
 */
import type { Readable, Writable } from 'node:stream';
import { openSystemBrowser } from '../auth/browser.js';
import { prompterFor } from '../permissions/terminal-prompter.js';
import type { Prompter } from '../permissions/prompter.js';

export { PROMPT_ANSWERS, type PromptAnswer, type Prompter as TurnPrompter } from '../permissions/prompter.js';
export type { ElicitationReply } from '../upstreams/elicitation.js';

/** The person at this terminal when stdin and stderr are both one, else no one (everything not granted is denied). */
export function terminalPrompter(stdin: Readable & { isTTY?: boolean }, stderr: Writable & { isTTY?: boolean }): Prompter {
  return prompterFor(stdin, stderr, { openUrl: openSystemBrowser });
}
