/**
 * The desktop's composition: the app with the window's approval queue as its prompter (P3), and
 * the IPC adapter over both. Electron main and the Chromium test harness start it the same way.
 */
import { WardApp, type WardAppOptions } from '../app/ward-app.js';
import { ApprovalQueue } from '../app/approvals.js';
import { watchApprovals, type AttentionPort } from './attention.js';
import { DesktopIpc, type DesktopPorts } from './handlers.js';

export interface Desktop {
  readonly app: WardApp;
  readonly ipc: DesktopIpc;
  /** Stops every run (waiting for tool drain), closes the broker and the stores. */
  close(): Promise<void>;
}

export interface DesktopPortOptions extends Omit<DesktopPorts, 'approvals'> {
  /** Notifications and the icon badge for approvals waiting in a window out of sight. */
  readonly attention?: AttentionPort;
  /** What clicking such a notification does (bring the window forward). */
  readonly bringForward?: () => void;
}

export function startDesktop(options: Omit<WardAppOptions, 'prompter'> & DesktopPortOptions): Desktop {
  const { openExternal, openSignIn, pickFolder, pickBundle, showReview, attention, bringForward, ...appOptions } = options;
  // The queue asks the app for the timeout (the policy's approvalTimeoutSeconds) when a question is asked.
  const approvals: ApprovalQueue = new ApprovalQueue((): number => app.approvalTimeoutMs);
  // A long-lived process: each conversation's CLI stays running between turns (issue 19).
  const app: WardApp = new WardApp({ ...appOptions, run: { warmSessions: true, ...appOptions.run }, prompter: approvals });
  // A malformed policy or conflicting namespace settings stop the app here (fail closed), not at the first click.
  void app.namespaces.fixed;
  const ipc = new DesktopIpc(app, { approvals, openExternal, openSignIn, pickFolder, pickBundle, showReview });
  const stopWatching = attention === undefined ? () => undefined : watchApprovals(approvals, attention, () => bringForward?.());
  return {
    app,
    ipc,
    close: () => {
      stopWatching();
      return app.close();
    },
  };
}
