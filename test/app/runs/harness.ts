/** Real parts for run-loop tests: a temp WARD_HOME, the real broker, the scripted model provider. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { Broker } from '../../../main/broker/broker.js';
import type { RunService } from '../../../main/app/runs/run-service.js';
import { WardApp, type RunOptions, type WardAppOptions } from '../../../main/app/ward-app.js';
import { DataFolder } from '../../../main/store/data-folder.js';
import { parseNamespace, type Namespace } from '../../../main/namespaces/namespace.js';
import type { JournalEvent } from '../../../main/store/journal.js';
import { startModelProvider, type ModelProvider, type ScriptStep } from '../../fixtures/model-provider/provider.js';

export const CANARY_KEY = 'sk-ant-canary-7f3e9b1c2d4a5e6f';

export interface Harness {
  readonly home: string;
  readonly tmpRoot: string;
  readonly core: DataFolder;
  readonly provider: ModelProvider;
  readonly broker: Broker;
  readonly app: WardApp;
  readonly service: RunService;
  readonly ns: Namespace;
  readonly env: NodeJS.ProcessEnv;
  events(conversationId: string): JournalEvent[];
  close(): Promise<void>;
}

/** The run seams, plus what the app takes: its environment, policy, prompter and connection store. */
export type HarnessOptions = RunOptions & Pick<WardAppOptions, 'policy' | 'prompter' | 'connectionStore'> & { env?: NodeJS.ProcessEnv };

const openHarnesses = new Set<Harness>();

export async function startHarness(script: ScriptStep[] = [], options: HarnessOptions = {}): Promise<Harness> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-test-home-'));
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-test-tmp-'));
  const core = new DataFolder(home);
  const provider = await startModelProvider(script);
  const broker = await Broker.start();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    ANTHROPIC_API_KEY: CANARY_KEY,
    WARD_MODEL_BASE_URL: provider.url,
    SOMETHING_SECRET: 'not-for-the-child',
    LD_PRELOAD: '/nonexistent/evil.so',
    ...options.env,
  };
  const { env: _extra, policy, prompter, connectionStore, ...run } = options;
  const app = new WardApp({
    folder: core,
    env,
    ...(policy === undefined ? {} : { policy }),
    ...(prompter === undefined ? {} : { prompter }),
    ...(connectionStore === undefined ? {} : { connectionStore }),
    run: { broker, tmpRoot, stopGraceMs: 3_000, ...run },
  });
  const service = await app.runs();
  const ns = parseNamespace('default');
  let closing: Promise<void> | undefined;
  const harness: Harness = {
    home,
    tmpRoot,
    core,
    provider,
    broker,
    app,
    service,
    ns,
    env,
    events: (conversationId) => [...core.store(ns).journal.read(conversationId)],
    close: () => {
      openHarnesses.delete(harness);
      closing ??= (async () => {
        await app.close();
        await broker.close();
        await provider.close();
        fs.rmSync(home, { recursive: true, force: true });
        fs.rmSync(tmpRoot, { recursive: true, force: true });
      })();
      return closing;
    },
  };
  openHarnesses.add(harness);
  return harness;
}

/** Closes every harness still open after each test of the calling file (a test may close its own first). */
export function closeHarnessesAfterEach(): void {
  afterEach(async () => {
    for (const harness of [...openHarnesses]) await harness.close();
  });
}

/**
 * The turn's event types in order. Model calls are left out: the gateway journals each as the
 * provider's answer ends, concurrently with the CLI's stream, so their place among the CLI's
 * events is not fixed (tests look at them with payloads(events, 'model_call')).
 */
export function types(events: readonly JournalEvent[]): string[] {
  return events.map((event) => event.type).filter((type) => type !== 'model_call');
}

export function payloads<T = Record<string, unknown>>(events: readonly JournalEvent[], type: string): T[] {
  return events.filter((event) => event.type === type).map((event) => event.payload as T);
}

/** The NUL-separated entries of /proc/PID/NAME (cmdline, environ). */
export function procEntries(pid: number, name: 'cmdline' | 'environ'): string[] {
  return fs.readFileSync(`/proc/${pid}/${name}`, 'utf8').split('\0').filter((part) => part !== '');
}

export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
