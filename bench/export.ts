import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { journalEvent } from '../common/events.js';
import { WardApp } from '../main/app/ward-app.js';
import { verifyBundle } from '../main/export/bundle.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { round, timeMs } from './stats.js';

const EVENTS = 100_000;
const BATCH = 1_000;

/**
 * E1: `ward export` of a 100,000-event conversation to a signed bundle (chain check, secret scan,
 * tar, statement, signature) through the app service, against a raw dump of the same rows as
 * JSON lines in the same run; then `ward verify-bundle` of the result.
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
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'bench' });
    for (let start = 0; start < EVENTS; start += BATCH) {
      store.journal.appendMany(
        conversation.id,
        Array.from({ length: BATCH }, (_, k) => journalEvent('assistant_text', { text: `assistant says something moderately long, number ${start + k}` })),
      );
    }
    await app.keys.signingKey(ns, true);
    const out = path.join(home, 'bench.wardbundle');
    let exportMs = 0;
    const started = process.hrtime.bigint();
    const result = await app.exports.export(store, conversation.id, { format: 'bundle', out });
    exportMs = Number(process.hrtime.bigint() - started) / 1e6;

    const dump = path.join(home, 'dump.jsonl');
    const rawMs = timeMs(() => {
      const rows = store.db.prepare('SELECT * FROM events WHERE conversation_id = ? ORDER BY seq').raw(true).all(conversation.id);
      fs.writeFileSync(dump, rows.map((row) => JSON.stringify(row)).join('\n'));
    });
    const verifyStarted = process.hrtime.bigint();
    const verdict = await verifyBundle(out);
    const verifyMs = Number(process.hrtime.bigint() - verifyStarted) / 1e6;
    return {
      events: result.events,
      bundleBytes: result.bytes,
      exportMs: round(exportMs, 1),
      baselineRawDumpMs: round(rawMs, 1),
      ratioToBaseline: round(exportMs / rawMs, 2),
      verifyBundleMs: round(verifyMs, 1),
      verified: verdict.ok,
      target: 'export <= 2000 ms',
      pass: verdict.ok && result.events === EVENTS && exportMs <= 2_000,
    };
  } finally {
    await app.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}
