/**
 * U2: who may call the IPC contract. Only the top frame of a window Ward created, showing Ward's
 * own page; anything else is refused before a payload is even parsed. Plain values so the check
 * and its wiring (DesktopIpc.invokeFrom) are tested under Node.
 */

/** The renderer is served from this custom scheme, never from a remote URL. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'ward';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

export interface SenderFacts {
  /** The sending webContents belongs to a window this process created. */
  readonly windowKnown: boolean;
  /** The sending frame is its page's top frame (no iframe, no subframe). */
  readonly isTopFrame: boolean;
  /** The sending frame's URL at the time of the call. */
  readonly frameUrl: string;
}

/** U2: returns why a sender is refused, or null when it is our window's top frame on our origin. */
export function senderRefusal(sender: SenderFacts): string | null {
  if (!sender.windowKnown) return 'the sender is not a Ward window';
  if (!sender.isTopFrame) return 'the sender is not the top frame';
  let origin: string;
  try {
    const url = new URL(sender.frameUrl);
    origin = `${url.protocol}//${url.host}`;
  } catch {
    return 'the sender has no valid URL';
  }
  if (origin !== APP_ORIGIN) return `the sender's origin ${origin.slice(0, 80)} is not ${APP_ORIGIN}`;
  return null;
}
