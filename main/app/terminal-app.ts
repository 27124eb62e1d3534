/**
 * The app as the `ward` command makes it: permission questions and servers' requests for input go
 * to the person at this terminal, if there is one (P3); sign-in addresses open in their browser.
 */
import type { Readable, Writable } from 'node:stream';
import type { StartSender } from './audit-sender.js';
import { terminalPrompter } from './terminal-questions.js';
import { WardApp } from './ward-app.js';

/** `auditSender`: how to start the background audit sender, which the turns of this process hand their journal to. */
export function terminalApp(env: NodeJS.ProcessEnv, stdin: Readable & { isTTY?: boolean }, stderr: Writable & { isTTY?: boolean }, auditSender?: StartSender): WardApp {
  return new WardApp({ env, prompter: terminalPrompter(stdin, stderr), ...(auditSender === undefined ? {} : { auditSender }) });
}

/**
 * The app of the `ward` service (issue 29): it runs the turns of `ward run`s that ask it, each
 * turn's questions going to the terminal that asked (StartTurnInput.prompter), and keeps each
 * conversation's CLI warm for its next turn, as the desktop does.
 */
export function serviceApp(env: NodeJS.ProcessEnv): WardApp {
  return new WardApp({ env, run: { warmSessions: true } });
}
