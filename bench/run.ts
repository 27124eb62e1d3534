// `npm run bench`: every benchmark, each against its baseline measured in the same run; JSON on stdout.
import { benchAuditDrain } from './audit-drain.js';
import { benchBrokerOverhead } from './broker-overhead.js';
import { benchChanges } from './changes.js';
import { benchColdStart } from './cold-start.js';
import { benchConnections } from './connections.js';
import { benchDiffViewer } from './diff-viewer.js';
import { benchGateway } from './gateway.js';
import { benchExport } from './export.js';
import { benchJournal } from './journal.js';
import { benchRendererFirstPaint } from './renderer-first-paint.js';
import { benchSandboxTurn } from './sandbox-turn.js';
import { benchSearch } from './search.js';
import { benchStreamPipeline } from './stream-pipeline.js';
import { benchTurn } from './turn.js';
import { benchTurnAuditSink } from './turn-audit.js';

const BENCHMARKS: Record<string, () => Promise<Record<string, unknown>>> = {
  auditDrain: benchAuditDrain,
  brokerOverhead: benchBrokerOverhead,
  changes: benchChanges,
  connections: benchConnections,
  diffViewer: benchDiffViewer,
  gateway: benchGateway,
  export: benchExport,
  journal: benchJournal,
  rendererFirstPaint: benchRendererFirstPaint,
  sandboxTurn: benchSandboxTurn,
  search: benchSearch,
  streamPipeline: benchStreamPipeline,
  turn: benchTurn,
  turnAuditSink: benchTurnAuditSink,
  wardColdStart: benchColdStart,
};

const only = process.argv.slice(2);
const results: Record<string, unknown> = { machine: { node: process.version, cpus: (await import('node:os')).cpus().length } };
for (const [name, bench] of Object.entries(BENCHMARKS)) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stderr.write(`bench: ${name}...\n`);
  try {
    results[name] = await bench();
  } catch (error) {
    results[name] = { error: error instanceof Error ? error.message : String(error), pass: false };
  }
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
