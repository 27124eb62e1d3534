/**
 * The desktop shell's security policy as plain values and functions (U1, U2), kept free of the
 * electron import so vitest checks it under Node; main.ts applies it.
 */
import path from 'node:path';

/** The renderer is served from this custom scheme, never from a remote URL. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'ward';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

/** U1: the settings every Ward window is created with. */
export const WINDOW_WEB_PREFERENCES = {
  sandbox: true,
  contextIsolation: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  navigateOnDragDrop: false,
  spellcheck: false,
} as const;

/** No remote code, no eval, no inline script; the page talks to main over IPC only. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

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

/**
 * Maps an app:// request to a file inside the renderer folder, or null for anything else
 * (another host, traversal out of the folder, encoded separators).
 */
export function resolveAppFile(requestUrl: string, rendererRoot: string): string | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  const relative = pathname === '/' ? 'index.html' : pathname.replace(/^\/+/, '');
  const root = path.resolve(rendererRoot);
  const file = path.resolve(root, relative);
  if (file !== root && !file.startsWith(root + path.sep)) return null;
  return file;
}

const MIME_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export function mimeTypeFor(file: string): string {
  return MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}
