/**
 * The desktop's composition: the app with the window's approval queue as its prompter (P3), and
 * the IPC adapter over both. Electron main and the Chromium test harness start it the same way.
 */
import { WardApp, type WardAppOptions } from '../app/ward-app.js';
import { ApprovalQueue } from '../permissions/approval-queue.js';
import { DEFAULT_PROMPT_TIMEOUT_MS } from '../permissions/run-permissions.js';
import { DesktopIpc, type DesktopPorts } from './handlers.js';

export interface Desktop {
  readonly app: WardApp;
  readonly ipc: DesktopIpc;
  /** Stops every run (waiting for tool drain), closes the broker and the stores. */
  close(): Promise<void>;
}

export function startDesktop(options: Omit<WardAppOptions, 'prompter'> & Omit<DesktopPorts, 'approvals'>): Desktop {
  const { openExternal, openSignIn, pickBundle, showReview, ...appOptions } = options;
  const approvals = new ApprovalQueue(options.run?.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS);
  const app = new WardApp({ ...appOptions, prompter: approvals });
  // A malformed policy or conflicting namespace settings stop the app here (fail closed), not at the first click.
  void app.namespaces.fixed;
  const ipc = new DesktopIpc(app, { approvals, openExternal, openSignIn, pickBundle, showReview });
  return { app, ipc, close: () => app.close() };
}
