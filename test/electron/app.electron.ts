/**
 * The desktop app itself, driven through Playwright's Electron support: window settings (U1),
 * the preload's surface and the IPC sender checks (U2). It needs the Electron binary, which
 * Electron 45 downloads on first use; machines that cannot download it (this project's CI) cannot
 * run it, so it is not part of `npm test`: `npm run test:electron` runs it, and fails naming the
 * missing binary where there is none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ELECTRON_DIR = path.join(ROOT, 'node_modules', 'electron');

/** Where the binary would be, read the way the electron package does, without its download fallback. */
function electronBinary(): string {
  const pathFile = path.join(ELECTRON_DIR, 'path.txt');
  const relative = fs.existsSync(pathFile) ? fs.readFileSync(pathFile, 'utf8').trim() : 'electron';
  return process.env.ELECTRON_OVERRIDE_DIST_PATH ? path.join(process.env.ELECTRON_OVERRIDE_DIST_PATH, relative) : path.join(ELECTRON_DIR, 'dist', relative);
}

const binary = electronBinary();

describe('the Electron app', () => {
  let app: ElectronApplication;
  let page: Page;
  let home: string;

  beforeAll(async () => {
    if (!fs.existsSync(binary)) throw new Error(`no Electron binary at ${binary}: start Ward once with network access (npm start downloads it), or set ELECTRON_OVERRIDE_DIST_PATH`);
    if (!fs.existsSync(path.join(ROOT, 'dist', 'renderer', 'index.html')) || !fs.existsSync(path.join(ROOT, 'dist', 'electron', 'main.js'))) {
      throw new Error('build first: node scripts/build.mjs all');
    }
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-electron-home-'));
    app = await _electron.launch({
      executablePath: binary,
      args: [ROOT, '--no-sandbox'],
      env: { PATH: process.env.PATH ?? '', HOME: home, WARD_HOME: home, DISPLAY: process.env.DISPLAY ?? '' },
      timeout: 60_000,
    });
    page = await app.firstWindow();
    await page.waitForLoadState('domcontentloaded');
  });

  afterAll(async () => {
    await app?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('test_loads_the_renderer_from_the_app_protocol_with_no_node_in_the_page', async () => {
    expect(page.url()).toBe('app://ward/index.html');
    // No Node in the page (nodeIntegration off, contextIsolation on: the preload's world is separate).
    await expect(page.evaluate(() => [typeof (window as unknown as { require?: unknown }).require, typeof (window as unknown as { process?: unknown }).process])).resolves.toEqual(['undefined', 'undefined']);
  });

  it('test_exposes_only_the_contract_purpose_named_functions_no_ipcrenderer', async () => {
    const surface = await page.evaluate(() => {
      const ward = (window as unknown as { ward: Record<string, unknown> }).ward;
      return { groups: Object.keys(ward).sort(), ipc: typeof (window as unknown as { ipcRenderer?: unknown }).ipcRenderer };
    });
    expect(surface.groups).toEqual(['agents', 'approvals', 'connections', 'conversations', 'journal', 'links', 'namespaces', 'onEvent', 'runs', 'settings']);
    expect(surface.ipc).toBe('undefined');
    const calls = await page.evaluate(async () => {
      const ward = (window as unknown as { ward: { namespaces: { list(p: unknown): Promise<unknown>; create(p: unknown): Promise<unknown> } } }).ward;
      return [await ward.namespaces.list({}), await ward.namespaces.create({ name: 'Not Valid' })];
    });
    expect(calls[0]).toEqual({ ok: true, value: [{ name: 'default' }] });
    expect(calls[1]).toMatchObject({ ok: false, error: { code: 'invalid_payload' } });
  });

  it('test_enforces_the_csp_no_eval_refuses_navigation_window_open_and_web_permissions', async () => {
    await expect(page.evaluate(() => {
      try {
        return String(eval('1 + 1'));
      } catch {
        return 'blocked';
      }
    })).resolves.toBe('blocked');
    await expect(page.evaluate(() => window.open('https://example.com') === null)).resolves.toBe(true);
    await page.evaluate(() => {
      window.location.href = 'https://example.com/';
    });
    await page.waitForTimeout(500);
    expect(page.url()).toBe('app://ward/index.html');
    await expect(page.evaluate(() => navigator.permissions.query({ name: 'notifications' as PermissionName }).then((status) => status.state))).resolves.not.toBe('granted');
    expect(app.windows()).toHaveLength(1);
  });

  it('test_refuses_ipc_from_a_window_ward_did_not_create_even_with_the_same_preload', async () => {
    const preload = path.join(ROOT, 'dist', 'preload', 'bridge.cjs');
    const result = await app.evaluate(async ({ BrowserWindow }, preloadPath) => {
      const foreign = new BrowserWindow({ show: false, webPreferences: { preload: preloadPath, sandbox: true, contextIsolation: true } });
      await foreign.loadURL('data:text/html,<p>foreign</p>');
      const answer = await foreign.webContents.executeJavaScript('window.ward.namespaces.list({})');
      foreign.destroy();
      return answer as unknown;
    }, preload);
    expect(result).toMatchObject({ ok: false, error: { code: 'forbidden_sender', message: 'namespaces.list: the sender is not a Ward window' } });
  });
});
