/**
 * End-to-end harness for the renderer in real Chromium: serves the built renderer (dist/renderer)
 * on 127.0.0.1 with Ward's CSP, and gives each page a `window.ward` built from the contract and
 * bound to the REAL core in this process (DataFolder, SQLite, RunService, broker, the pinned CLI
 * driven by the scripted model provider). Only the Electron IPC transport is replaced.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { PushedEvent } from '../../../preload/contract.js';
import { createAgentVersion } from '../../../main/agents/service.js';
import { startDesktop, type Desktop } from '../../../main/ipc/desktop.js';
import type { AttentionNote } from '../../../main/ipc/attention.js';
import type { Client } from '../../../main/ipc/client.js';
import type { ExternalOpener } from '../../../main/ipc/handlers.js';
import { DataFolder } from '../../../main/store/data-folder.js';
import { CONTENT_SECURITY_POLICY, mimeTypeFor } from '../../../main/electron/policy.js';
import { parseNamespace, type Namespace } from '../../../main/namespaces/namespace.js';
import { FIXTURE_STDIO } from '../../app/runs/agents.js';
import { startModelProvider, type ModelProvider, type ScriptStep } from '../../fixtures/model-provider/provider.js';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const RENDERER_DIR = path.join(ROOT, 'dist', 'renderer');
export const SCREENSHOT_DIR = path.join(ROOT, 'test-artifacts', 'screenshots');
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'];
export const CANARY_KEY = 'sk-ant-canary-e2e-5c1d9a7b3f2e4d60';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/** Serves dist/renderer read-only on loopback, with the same CSP the Electron shell sends. */
export async function serveRenderer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    const file = path.resolve(RENDERER_DIR, pathname === '/' ? 'index.html' : pathname.replace(/^\/+/, ''));
    if (!file.startsWith(RENDERER_DIR + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': mimeTypeFor(file), 'content-security-policy': CONTENT_SECURITY_POLICY, 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let bridgeSource: Promise<string> | undefined;
/** The page-side bridge, bundled from the contract the preload uses. */
function pageBridge(): Promise<string> {
  bridgeSource ??= build({
    entryPoints: [path.join(import.meta.dirname, 'page-bridge.ts')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0]!.text);
  return bridgeSource;
}

export interface UiHarness {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly url: string;
  readonly core: DataFolder;
  readonly desktop: Desktop;
  readonly provider: ModelProvider;
  readonly ns: Namespace;
  readonly context: BrowserContext;
  /** Every push sent to any page, for assertions on what crossed the boundary. */
  readonly pushed: PushedEvent[];
  /** Every IPC result returned to any page, serialized. */
  readonly results: string[];
  readonly opened: URL[];
  /** Sign-in pages main asked the system browser to open (played by this Chromium). */
  readonly signIns: URL[];
  /** What the system's folder dialog answers next (null: the person cancels it). */
  folderChoice: string | null;
  /** The OS side of approvals out of sight: whether Ward "has focus", the notifications shown, the badge counts set. */
  readonly attention: { focused: boolean; readonly notes: AttentionNote[]; readonly clicks: (() => void)[]; readonly badges: number[] };
  open(): Promise<Page>;
  /** Pids of CLI children of this process (the pinned claude binary). */
  cliChildren(): number[];
  close(): Promise<void>;
}

export interface UiHarnessOptions {
  readonly script?: ScriptStep[];
  readonly stopGraceMs?: number;
  readonly promptTimeoutMs?: number;
  /** Extra variables in Ward's environment (WARD_NAMESPACE, WARD_POLICY, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /** The file "Open bundle…" picks (the Electron shell shows a file dialog). */
  readonly bundleToOpen?: string;
}

export async function startUiHarness(browser: Browser, options: UiHarnessOptions = {}): Promise<UiHarness> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-e2e-home-'));
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-e2e-tmp-'));
  // The opt-in file store (C2) keeps model keys here without a desktop keychain session.
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }), { mode: 0o600 });
  const core = new DataFolder(home);
  const ns = parseNamespace('default');
  core.store(ns);
  const provider = await startModelProvider(options.script ?? []);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url, ...options.env };
  const opened: URL[] = [];
  const openExternal: ExternalOpener = async (url) => {
    opened.push(url);
    return false;
  };
  const signIns: URL[] = [];
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  // The "system browser" for sign-in is this Chromium: it follows the provider to the loopback callback.
  const openSignIn = async (url: URL) => {
    signIns.push(url);
    const page = await context.newPage();
    void page
      .goto(url.href, { timeout: 20_000 })
      .catch(() => undefined)
      .finally(() => void page.close().catch(() => undefined));
  };
  const attention = { focused: true, notes: [] as AttentionNote[], clicks: [] as (() => void)[], badges: [] as number[] };
  const folderDialog = { choice: null as string | null };
  const desktop = startDesktop({
    folder: core,
    env,
    openExternal,
    openSignIn,
    pickFolder: () => Promise.resolve(folderDialog.choice),
    attention: {
      focused: () => attention.focused,
      notify: (note, onClick) => {
        attention.notes.push(note);
        attention.clicks.push(onClick);
      },
      setBadge: (count) => attention.badges.push(count),
    },
    run: { tmpRoot, stopGraceMs: options.stopGraceMs ?? 3_000, ...(options.promptTimeoutMs === undefined ? {} : { promptTimeoutMs: options.promptTimeoutMs }) },
    pickBundle: async () => options.bundleToOpen ?? null,
  });
  const site = await serveRenderer();
  const pushed: PushedEvent[] = [];
  const results: string[] = [];

  // One client per page document: a reload ends the old document's subscriptions, as in Electron.
  const clients = new WeakMap<Page, Client>();
  let nextClient = 0;
  const clientFor = (page: Page): Client => {
    let client = clients.get(page);
    if (client === undefined) {
      client = {
        id: `page-${nextClient++}`,
        // As the Electron shell marks the windows it opens for a bundle.
        reviewOnly: page.url().includes('#review/'),
        push(event) {
          pushed.push(event);
          // As a JSON string: Playwright's argument serializer is slow for big object graphs.
          page.evaluate((json) => (window as unknown as { __wardPush?: (event: unknown) => void }).__wardPush?.(JSON.parse(json)), JSON.stringify(event)).catch(() => undefined);
        },
      };
      clients.set(page, client);
    }
    return client;
  };
  await context.exposeBinding('__wardInvoke', async (source, channel: unknown, payload: unknown) => {
    const result = await desktop.ipc.dispatch(clientFor(source.page), channel, payload);
    results.push(JSON.stringify(result));
    return result;
  });
  await context.addInitScript({ content: await pageBridge() });
  // A new document or a closed page ends that page's subscriptions, as a reload or close does in Electron.
  const release = (page: Page) => {
    const old = clients.get(page);
    if (old !== undefined) desktop.ipc.releaseClient(old.id);
    clients.delete(page);
  };
  context.on('page', (page) => {
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) release(page);
    });
    page.on('close', () => release(page));
  });

  return {
    home,
    env,
    url: site.url,
    core,
    desktop,
    provider,
    ns,
    context,
    pushed,
    results,
    opened,
    signIns,
    get folderChoice() {
      return folderDialog.choice;
    },
    set folderChoice(choice: string | null) {
      folderDialog.choice = choice;
    },
    attention,
    async open() {
      const page = await context.newPage();
      await page.goto(site.url);
      return page;
    },
    cliChildren() {
      const children: number[] = [];
      for (const entry of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
          const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          // Sandboxed (main/runner/sandbox.ts), the direct child is bwrap with the CLI inside.
          if (Number(afterName[1]) === process.pid && (name === 'claude' || name === 'bwrap')) children.push(Number(entry));
        } catch {
          // The process ended while we looked.
        }
      }
      return children;
    },
    async close() {
      await context.close();
      await desktop.close();
      await site.close();
      await provider.close();
      core.close();
      fs.rmSync(home, { recursive: true, force: true });
      fs.rmSync(tmpRoot, { recursive: true, force: true });
    },
  };
}

/** Publishes an agent pinned to the real stdio fixture MCP server's tools. */
export interface UiSuite {
  /** Starts this test's harness (dist/ is built by npm test or test/global-setup.ts); closed after the test. */
  start(options?: UiHarnessOptions): Promise<UiHarness>;
  /** A fresh temp folder, its real path (no symlinks), removed after the test. */
  tempDir(prefix: string): string;
}

/** The hooks every e2e file needs: one Chromium for the file; each test's harness and folders cleaned up after it. */
export function useUiSuite(): UiSuite {
  let browser: Browser | undefined;
  let current: UiHarness | undefined;
  const made: string[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    async start(options) {
      current = await startUiHarness(browser!, options);
      return current;
    },
    tempDir(prefix) {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
      made.push(dir);
      return dir;
    },
  };
}

export async function publishToolAgent(harness: UiHarness, name = 'tooly', tools = ['echo', 'slow']) {
  return createAgentVersion(
    harness.core.store(harness.ns),
    {
      name,
      instructions: 'Use the tools when asked.',
      upstreams: { fixture: { type: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE_STDIO], envNames: [] } },
      tools: tools.map((tool) => ({ upstream: 'fixture', tool })),
    },
    harness.env,
  );
}

/** The conversation's timeline (the session list repeats a chat's latest text as its preview). */
export function timelineOf(page: Page) {
  return page.getByRole('region', { name: 'Conversation' });
}

/** Saves the screen as `NAME-light.png` and `NAME-dark.png`, then leaves the page in the scheme it had. */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const dark = await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
}

/** Publishes an agent and creates a conversation whose journal the test fills through the store. */
export function seedConversation(harness: UiHarness, title: string, agent = 'helper') {
  const store = harness.core.store(harness.ns);
  const version = store.agents.find(agent) ?? store.agents.publish(agent, { instructions: 'Be brief.' });
  return store.conversations.create({ agentId: version.agentId, agentVersion: version.version, title });
}

/** The field shows `pattern` as its own error, tied to it (aria-invalid, aria-describedby), and no banner covers the page for it. */
export async function expectFieldError(field: Locator, pattern: RegExp): Promise<void> {
  await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
  const described = await field.getAttribute('aria-describedby');
  await expect(field.page().locator(`[id="${described}"]`).textContent()).resolves.toMatch(pattern);
  await expect(field.page().locator('.banner-error').count()).resolves.toBe(0);
}

/** Opens the Connections page's add forms, which fold away behind "Add a connection" once a connection exists. */
export async function showAddForms(page: Page): Promise<void> {
  const disclosure = page.locator('details.add-connection');
  await disclosure.waitFor();
  if (!(await disclosure.evaluate((element) => (element as HTMLDetailsElement).open))) await disclosure.locator('summary').click();
}

export async function addRemoteConnection(page: Page, name: string, url: string): Promise<void> {
  await showAddForms(page);
  const form = page.getByRole('form', { name: 'Add a remote MCP server' });
  await form.getByRole('textbox', { name: 'Name' }).fill(name);
  await form.getByRole('textbox', { name: 'Server URL' }).fill(url);
  await form.getByRole('button', { name: 'Add connection' }).click();
}

/** A chat whose run Ward lost track of (R8): running with `events` journaled, then uncertain, as after a crash. */
export function seedUncertainRun(harness: UiHarness, title: string, events: readonly { readonly type: string; readonly payload: unknown }[]) {
  const conversation = seedConversation(harness, title);
  const store = harness.core.store(harness.ns);
  const { run } = store.runs.admit(conversation.id, 'req-lost', 'fingerprint');
  store.runs.transition(run.id, 'running');
  store.journal.appendMany(
    conversation.id,
    events.map((event) => ({ ...event, runId: run.id })),
  );
  store.runs.transition(run.id, 'uncertain', 'the Ward process (pid 4242) ended while the run was running; its outcome is unknown');
  return { conversation, run, store };
}

/** Starts a chat through the UI's own "New chat" and sends its first prompt with the keyboard; the chat is titled from it. */
export async function startChat(page: Page, agent: string, prompt: string): Promise<void> {
  await page.getByRole('button', { name: 'New chat' }).first().click();
  await page.getByRole('combobox', { name: 'Agent' }).selectOption(agent);
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(prompt);
  await box.press('Enter');
  await page.getByRole('heading', { level: 1, name: prompt.split('\n')[0] }).waitFor();
}
