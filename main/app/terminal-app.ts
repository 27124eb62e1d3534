/**
 * The app as the `ward` command makes it: permission questions and servers' requests for input go
 * to the person at this terminal, if there is one (P3); sign-in addresses open in their browser.
 */
import type { Readable, Writable } from 'node:stream';
import { openSystemBrowser } from '../auth/browser.js';
import { prompterFor } from '../permissions/terminal-prompter.js';
import type { StartSender } from './audit-sender.js';
import { WardApp } from './ward-app.js';

/** `auditSender`: how to start the background audit sender, which the turns of this process hand their journal to. */
export function terminalApp(env: NodeJS.ProcessEnv, stdin: Readable & { isTTY?: boolean }, stderr: Writable & { isTTY?: boolean }, auditSender?: StartSender): WardApp {
  return new WardApp({ env, prompter: prompterFor(stdin, stderr, { openUrl: openSystemBrowser }), ...(auditSender === undefined ? {} : { auditSender }) });
}
