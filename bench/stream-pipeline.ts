/**
 * Stream pipeline: a child process writes stream-json assistant lines at 1,000 lines/s; Ward
 * reads them from the pipe, parses them (StreamJsonParser), commits each to the journal and a
 * journal subscriber receives it. Latency per line = subscriber time − the child's write time
 * (process.hrtime is CLOCK_MONOTONIC, shared by processes on Linux). Baseline, same run: the same
 * child and parser with a bare in-memory callback instead of journal + subscriber.
 * Target: pipeline p99 ≤ 5 ms.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataFolder } from '../main/store/data-folder.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { StreamJsonParser } from '../main/runner/stream-parser.js';
import { percentile, round } from './stats.js';

const LINES = 3_000;
const RATE_PER_S = 1_000;
const TARGET_P99_MS = 5;

/** The writer: paced lines shaped like the CLI's assistant messages, each carrying its write time. */
const WRITER = `
const total = ${LINES}, rate = ${RATE_PER_S};
const filler = 'x'.repeat(400);
const start = process.hrtime.bigint();
let sent = 0;
function tick() {
  const due = Math.min(total, Math.floor(Number(process.hrtime.bigint() - start) / 1e9 * rate) + 1);
  let chunk = '';
  for (; sent < due; sent++) {
    const text = process.hrtime.bigint().toString() + ' ' + filler;
    chunk += JSON.stringify({ type: 'assistant', message: { id: 'msg_' + sent, type: 'message', role: 'assistant', content: [{ type: 'text', text }] }, session_id: 's' }) + '\\n';
  }
  if (chunk) process.stdout.write(chunk);
  if (sent < total) setTimeout(tick, 1);
}
tick();
`;

/** Gets the assistant texts of one stdout chunk, as the run service does (one transaction per chunk). */
type Sink = (texts: string[], record: (latencyMs: number) => void) => void;

async function measure(makeSink: () => { sink: Sink; close(): void }): Promise<number[]> {
  const latencies: number[] = [];
  const { sink, close } = makeSink();
  const record = (latencyMs: number) => latencies.push(latencyMs);
  let texts: string[] = [];
  const parser = new StreamJsonParser((message) => {
    if (message.kind === 'assistant_text') texts.push(message.text);
  });
  const child = spawn(process.execPath, ['-e', WRITER], { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.on('data', (chunk: Buffer) => {
    parser.push(chunk);
    const batch = texts;
    texts = [];
    if (batch.length > 0) sink(batch, record);
  });
  await new Promise((resolve) => child.on('close', resolve));
  parser.end();
  close();
  if (latencies.length !== LINES) throw new Error(`expected ${LINES} lines, measured ${latencies.length}`);
  return latencies;
}

function latencyOf(text: string): number {
  const sentAt = BigInt(text.slice(0, text.indexOf(' ')));
  return Number(process.hrtime.bigint() - sentAt) / 1e6;
}

function summary(samples: number[]) {
  return { p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)), maxMs: round(percentile(samples, 100)) };
}

export async function benchStreamPipeline(): Promise<Record<string, unknown>> {
  const baseline = await measure(() => ({ sink: (texts, record) => texts.forEach((text) => record(latencyOf(text))), close: () => undefined }));

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-stream-'));
  const core = new DataFolder(home);
  let pipeline: number[];
  try {
    const store = core.store(parseNamespace('bench'));
    const agent = store.agents.publish('bench', { instructions: '' });
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'bench' });
    pipeline = await measure(() => {
      let pending: ((latencyMs: number) => void) | undefined;
      // The subscriber is told only after the commit, as in a run (J1).
      const unsubscribe = store.journal.subscribe(conversation.id, 0, (event) => pending?.(latencyOf((event.payload as { text: string }).text)));
      return {
        sink: (texts, record) => {
          pending = record;
          store.journal.appendMany(conversation.id, texts.map((text) => ({ type: 'assistant_text', payload: { text } })));
        },
        close: unsubscribe,
      };
    });
  } finally {
    core.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
  const result = { lines: LINES, ratePerSecond: RATE_PER_S, pipeline: summary(pipeline), baseline: summary(baseline) };
  const p99 = result.pipeline.p99Ms;
  return { ...result, addedP99Ms: round(p99 - result.baseline.p99Ms), targetP99Ms: TARGET_P99_MS, pass: p99 <= TARGET_P99_MS };
}
