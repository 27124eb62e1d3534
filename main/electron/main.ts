/**
 * The Electron shell: app lifecycle, window hardening (U1) and IPC registration (U2).
 * Everything it decides is in policy.ts and main/ipc; everything it serves comes from the app
 * through DesktopIpc, so this file stays thin.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, Notification, protocol, session, shell, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { CHANNEL_NAMES, EVENT_CHANNEL, wireChannel, type PushedEvent } from '../../preload/contract.js';
import type { AttentionPort } from '../ipc/attention.js';
import { startDesktop } from '../ipc/desktop.js';
import type { Client } from '../ipc/client.js';
import type { DesktopIpc } from '../ipc/handlers.js';
import { APP_ENTRY, APP_SCHEME } from '../ipc/sender.js';
import { CONTENT_SECURITY_POLICY, mimeTypeFor, resolveAppFile, WINDOW_WEB_PREFERENCES } from './policy.js';

// dist/electron/main.js → dist/renderer and dist/preload/bridge.cjs
const distDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rendererRoot = path.join(distDir, 'renderer');
const preloadFile = path.join(distDir, 'preload', 'bridge.cjs');

// Everything Ward writes (databases, their WAL, run folders) is the user's alone.
process.umask(0o077);

const windows = new Set<WebContents>();
/** Review windows (E4) and the bundle each shows: they reach only the review channels. */
const reviewWindows = new Map<WebContents, string>();

// standard + secure give the page a real origin (app://ward) for CSP 'self' and ES modules;
// nothing can be fetched anyway (connect-src 'none').
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } }]);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    const window = BrowserWindow.getAllWindows()[0];
    if (window === undefined) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('window-all-closed', () => app.quit());
  void app.whenReady().then(start).catch((error: unknown) => {
    dialog.showErrorBox('Ward could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
  });
}

/** Nothing in a Ward page navigates, opens windows or embeds webviews. */
app.on('web-contents-created', (_event, contents) => {
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});

async function confirmAndOpen(url: URL): Promise<boolean> {
  const owner = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
  const options = {
    type: 'question' as const,
    buttons: ['Cancel', 'Open in browser'],
    defaultId: 0,
    cancelId: 0,
    message: 'Open this link in your browser?',
    detail: `${url.href.slice(0, 500)}\n\nLinks in chats can come from the model; open only what you trust.`,
  };
  const { response } = owner === undefined ? await dialog.showMessageBox(options) : await dialog.showMessageBox(owner, options);
  if (response !== 1) return false;
  await shell.openExternal(url.href);
  return true;
}

/** The system's folder dialog, for a new chat's project folder. */
async function pickFolder(): Promise<string | null> {
  const owner = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
  const options = { title: 'Project folder for the new chat', properties: ['openDirectory' as const, 'createDirectory' as const] };
  const { canceled, filePaths } = owner === undefined ? await dialog.showOpenDialog(options) : await dialog.showOpenDialog(owner, options);
  return canceled ? null : (filePaths[0] ?? null);
}

function bringForward(): void {
  const window = BrowserWindow.getAllWindows()[0];
  if (window === undefined) return;
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}

/** OS notifications and the dock/taskbar badge (app.setBadgeCount is a no-op where the OS has none). */
const attention: AttentionPort = {
  focused: () => BrowserWindow.getFocusedWindow() !== null,
  notify(note, onClick) {
    if (!Notification.isSupported()) return;
    const shown = new Notification({ title: note.title, body: note.body, silent: false });
    shown.on('click', onClick);
    shown.show();
  },
  setBadge(count) {
    app.setBadgeCount(count);
  },
};

/** The person picks a bundle to review; nothing is read before they do. */
async function pickBundle(): Promise<string | null> {
  const owner = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
  const options = { title: 'Open a Ward bundle', properties: ['openFile' as const], filters: [{ name: 'Ward bundles', extensions: ['wardbundle'] }] };
  const picked = owner === undefined ? await dialog.showOpenDialog(options) : await dialog.showOpenDialog(owner, options);
  return picked.canceled ? null : (picked.filePaths[0] ?? null);
}

function clientFor(contents: WebContents): Client {
  return {
    id: String(contents.id),
    reviewOnly: reviewWindows.has(contents),
    push(event: PushedEvent) {
      if (!contents.isDestroyed()) contents.send(EVENT_CHANNEL, event);
    },
  };
}

function registerIpc(ipc: DesktopIpc): void {
  for (const name of CHANNEL_NAMES) {
    ipcMain.handle(wireChannel(name), (event: IpcMainInvokeEvent, payload: unknown) => {
      const frame = event.senderFrame;
      const sender = { windowKnown: windows.has(event.sender), isTopFrame: frame !== null && frame === event.sender.mainFrame, frameUrl: frame?.url ?? '' };
      return ipc.invokeFrom(sender, clientFor(event.sender), name, payload);
    });
  }
}

function serveRenderer(): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppFile(request.url, rendererRoot);
    if (file === null) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, {
        headers: { 'content-type': mimeTypeFor(file), 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff' },
      });
    } catch {
      return new Response('not found', { status: 404 });
    }
  });
}

/** The main window, or (with a review id) a review window that shows one bundle and reaches nothing else. */
function createWindow(service: DesktopIpc, review?: { id: string; close: () => void }): void {
  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    title: review === undefined ? 'Ward' : 'Ward · review',
    show: false,
    webPreferences: { ...WINDOW_WEB_PREFERENCES, preload: preloadFile },
  });
  const contents = window.webContents;
  const id = String(contents.id);
  windows.add(contents);
  if (review !== undefined) reviewWindows.set(contents, review.id);
  // A reload or a crash ends the page's subscriptions; the new page subscribes again from its cursor.
  contents.on('did-start-navigation', (details) => {
    if (details.isMainFrame && !details.isSameDocument) service.releaseClient(id);
  });
  contents.on('render-process-gone', () => service.releaseClient(id));
  contents.on('destroyed', () => {
    service.releaseClient(id);
    windows.delete(contents);
    if (reviewWindows.delete(contents)) review?.close();
  });
  window.once('ready-to-show', () => window.show());
  void window.loadURL(review === undefined ? APP_ENTRY : `${APP_ENTRY}#review/${review.id}`);
}

async function start(): Promise<void> {
  const denyAll = session.defaultSession;
  // Only writing to the clipboard (the Copy buttons); reading it, and everything else, is refused.
  denyAll.setPermissionRequestHandler((_contents, permission, callback) => callback(permission === 'clipboard-sanitized-write'));
  denyAll.setPermissionCheckHandler((_contents, permission) => permission === 'clipboard-sanitized-write');
  denyAll.setDevicePermissionHandler(() => false);

  const desktop = startDesktop({
    env: process.env,
    openExternal: confirmAndOpen,
    // The person pressed "Sign in"; main has checked the URL is http(s).
    openSignIn: (url) => shell.openExternal(url.href),
    pickFolder,
    attention,
    bringForward,
    pickBundle,
    showReview: (reviewId) => createWindow(desktop.ipc, { id: reviewId, close: () => void desktop.app.reviews.close(reviewId) }),
  });
  serveRenderer();
  registerIpc(desktop.ipc);
  createWindow(desktop.ipc);
  // Runs are stopped (and their tools drained, R6/B7) before the store closes.
  let closing = false;
  app.on('before-quit', (event) => {
    if (closing) return;
    closing = true;
    event.preventDefault();
    void desktop.close().finally(() => app.quit());
  });
}
