import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { journalEvent } from '../common/events.js';
import { WardApp } from '../main/app/ward-app.js';
import { verifyBundle } from '../main/export/bundle.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { round, timeMs } from './stats.js';

const EVENTS = 100_000;
const SMALL = 10_000;
const BATCH = 1_000;
const ROUNDS = 3;
const ROOT = path.resolve(import.meta.dirname, '..');
/** Lines `ward review` prints before its first event: a screen is about this many more. */
const SCREEN_LINES = 50;

const median = (samples: number[]): number => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;

async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** The old-generation heap an export child may use (a 10,000-event transcript's live heap is about 30 MiB). */
const HEAP_CAP_MIB = 64;

/** Peak RSS (MiB) of a child process that exports one conversation of `home` in `format`. */
function exportPeakMiB(home: string, conversationId: string, format: string, out: string): number {
  const script = `
    import { WardApp } from ${JSON.stringify(path.join(ROOT, 'main/app/ward-app.ts'))};
    import { parseNamespace } from ${JSON.stringify(path.join(ROOT, 'main/namespaces/namespace.ts'))};
    const app = new WardApp({ home: ${JSON.stringify(home)}, env: {}, policy: null });
    const before = process.resourceUsage().maxRSS;
    await app.exports.export(app.folder.store(parseNamespace('default')), ${JSON.stringify(conversationId)}, { format: ${JSON.stringify(format)}, out: ${JSON.stringify(out)} });
    await app.close();
    process.stdout.write(JSON.stringify({ before, after: process.resourceUsage().maxRSS }));`;
  // The heap is capped: an export that held its events (not streamed) would run out of memory at 100,000, not just peak higher.
  const result = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_CAP_MIB}`, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  if (result.status !== 0) throw new Error(`export child failed: ${result.stderr.slice(0, 500)}`);
  fs.rmSync(out, { force: true });
  return round((JSON.parse(result.stdout) as { after: number }).after / 1024, 1);
}

/** Peak RSS (MiB) of `ward review` (the built CLI) reading a whole bundle: its reader streams, so about the same at any size. */
function reviewPeakMiB(file: string, home: string): number {
  // A preload that reports the process's own peak as it exits, on a descriptor of its own.
  const preload = path.join(home, 'peak-rss.cjs');
  fs.writeFileSync(preload, "process.on('exit', () => require('node:fs').writeSync(3, String(process.resourceUsage().maxRSS)));\n");
  const result = spawnSync(process.execPath, ['--require', preload, path.join(ROOT, 'bin', 'ward.js'), 'review', file], {
    env: { PATH: process.env.PATH, WARD_HOME: path.join(home, 'no-such-home') },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 300_000,
  });
  const peak = Number(result.output[3]);
  if (!Number.isFinite(peak) || peak === 0) throw new Error(`review child reported no peak: ${String(result.stderr).slice(0, 500)}`);
  return round(peak / 1024, 1);
}

/** Rounds of `ward review`'s first screen, each beside a `node -e 0` (medians). */
const REVIEW_ROUNDS = 5;

/** Milliseconds until `args` (a node process) exits, or, with `screenLines`, until that many lines are on its stdout (then its stdout is closed: the command stops at its next write). */
function spawnedMs(args: readonly string[], env: NodeJS.ProcessEnv, screenLines = 0): Promise<{ screenMs: number; totalMs: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const elapsed = () => round(Number(process.hrtime.bigint() - started) / 1e6, 1);
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let lines = 0;
    let screenMs = Number.NaN;
    child.stdout.on('data', (chunk: Buffer) => {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
      if (screenLines === 0 || !Number.isNaN(screenMs) || lines < screenLines) return;
      screenMs = elapsed();
      child.stdout.destroy();
    });
    child.on('error', reject);
    child.on('close', () => resolve({ screenMs, totalMs: elapsed() }));
  });
}

/**
 * `ward review` (the built CLI) of a bundle until its first screen of events is on stdout, against
 * `node -e 0` (Node's own start, the floor under any command's first output) in the same rounds, so
 * the load the figures were taken under shows: medians of the rounds, the ratio a median of the
 * rounds' ratios. One more review is read to its end (the total).
 */
async function reviewTimes(file: string, home: string): Promise<{ reviewFirstScreenMs: number; reviewNodeStartMs: number; reviewFirstScreenToNodeStart: number; reviewTotalMs: number }> {
  const env = { PATH: process.env.PATH, WARD_HOME: home };
  const review = [path.join(ROOT, 'bin', 'ward.js'), 'review', file];
  const nodeMs: number[] = [];
  const screenMs: number[] = [];
  for (let round = 0; round < REVIEW_ROUNDS; round++) {
    nodeMs.push((await spawnedMs(['-e', '0'], env)).totalMs);
    screenMs.push((await spawnedMs(review, env, SCREEN_LINES)).screenMs);
  }
  const ratios = screenMs.map((ms, index) => ms / nodeMs[index]!);
  return {
    reviewFirstScreenMs: round(median(screenMs), 1),
    reviewNodeStartMs: round(median(nodeMs), 1),
    reviewFirstScreenToNodeStart: round(median(ratios), 2),
    reviewTotalMs: (await spawnedMs(review, env)).totalMs,
  };
}

/**
 * E1, E4: `ward export` of a 100,000-event conversation to a signed bundle (chain check, secret
 * scan, event list, tar, statement, signature) through the app service, against a raw dump of the
 * same rows as JSON lines, `ward verify-bundle` of the result and the Markdown and HTML
 * transcripts against the bundle export, three rounds taken in turn (medians); the transcripts' peak
 * memory at 100,000 and at 10,000 events (streamed: about the same); `ward review` (the built CLI)
 * until its first screen of events against `node -e 0`, and its peak memory at both sizes.
 */
export async function benchExport(): Promise<Record<string, unknown>> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-export-'));
  // The file store keeps the signing key here: the keychain's latency is not what is measured.
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }), { mode: 0o600 });
  const app = new WardApp({ home, env: {}, policy: null });
  try {
    const ns = parseNamespace('default');
    const store = app.folder.store(ns);
    const agent = store.agents.publish('bench', { instructions: '' });
    const seed = (events: number) => {
      const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'bench' });
      for (let start = 0; start < events; start += BATCH) {
        store.journal.appendMany(
          conversation.id,
          Array.from({ length: BATCH }, (_, k) => journalEvent('assistant_text', { text: `assistant says something moderately long, number ${start + k}` })),
        );
      }
      return conversation.id;
    };
    const conversationId = seed(EVENTS);
    const smallId = seed(SMALL);
    await app.keys.signingKey(ns, true);
    const out = (name: string) => path.join(home, name);

    const exportMs: number[] = [];
    const rawMs: number[] = [];
    const verifyMs: number[] = [];
    const markdownMs: number[] = [];
    const htmlMs: number[] = [];
    let bundleBytes = 0;
    let verified = true;
    for (let round = 0; round < ROUNDS; round++) {
      const file = out(`bench-${round}.wardbundle`);
      exportMs.push(await timedMs(async () => (bundleBytes = (await app.exports.export(store, conversationId, { format: 'bundle', out: file })).bytes)));
      const dump = out(`dump-${round}.jsonl`);
      rawMs.push(
        timeMs(() => {
          const rows = store.db.prepare('SELECT * FROM events WHERE conversation_id = ? ORDER BY seq').raw(true).all(conversationId);
          fs.writeFileSync(dump, rows.map((row) => JSON.stringify(row)).join('\n'));
        }),
      );
      verifyMs.push(await timedMs(async () => (verified &&= (await verifyBundle(file)).ok)));
      // The transcripts in the same rounds as the export they are held against: one sample each was noise.
      markdownMs.push(await timedMs(() => app.exports.export(store, conversationId, { format: 'markdown', out: out(`bench-${round}.md`) })));
      htmlMs.push(await timedMs(() => app.exports.export(store, conversationId, { format: 'html', out: out(`bench-${round}.html`) })));
      if (round > 0) fs.rmSync(file);
      for (const done of [dump, out(`bench-${round}.md`), out(`bench-${round}.html`)]) fs.rmSync(done);
    }
    const review = await reviewTimes(out('bench-0.wardbundle'), path.join(home, 'no-such-home'));
    await app.exports.export(store, smallId, { format: 'bundle', out: out('small.wardbundle') });
    const reviewMemory = { [`reviewPeakMiB${EVENTS / 1000}k`]: reviewPeakMiB(out('bench-0.wardbundle'), home), [`reviewPeakMiB${SMALL / 1000}k`]: reviewPeakMiB(out('small.wardbundle'), home) };
    const memory = Object.fromEntries(
      ['markdown', 'html', 'bundle'].flatMap((format) => [
        [`${format}PeakMiB${EVENTS / 1000}k`, exportPeakMiB(home, conversationId, format, out(`peak-${format}`))],
        [`${format}PeakMiB${SMALL / 1000}k`, exportPeakMiB(home, smallId, format, out(`peak-small-${format}`))],
      ]),
    );
    const exported = median(exportMs);
    const raw = median(rawMs);
    const verify = median(verifyMs);
    const markdown = median(markdownMs);
    const html = median(htmlMs);
    const ratios = {
      exportToRawDump: round(exported / raw, 2),
      verifyToExport: round(verify / exported, 2),
      markdownToBundle: round(markdown / exported, 2),
      htmlToBundle: round(html / exported, 2),
    };
    return {
      events: EVENTS,
      bundleBytes,
      exportMedianMs: round(exported, 1),
      baselineRawDumpMedianMs: round(raw, 1),
      verifyBundleMedianMs: round(verify, 1),
      markdownMedianMs: round(markdown, 1),
      htmlMedianMs: round(html, 1),
      ...review,
      ...memory,
      ...reviewMemory,
      ...ratios,
      verified,
      target: 'export <= 1.2x raw dump; verify <= 1.0x export; markdown, html <= 2x export in constant memory; review first screen <= 1000 ms (median of 5, beside node -e 0)',
      pass: verified && ratios.exportToRawDump <= 1.2 && ratios.verifyToExport <= 1.0 && ratios.markdownToBundle <= 2 && ratios.htmlToBundle <= 2 && review.reviewFirstScreenMs <= 1_000,
    };
  } finally {
    await app.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}
