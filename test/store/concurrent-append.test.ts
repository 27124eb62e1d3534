import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

const WORKER = path.join(import.meta.dirname, 'fixtures', 'append-worker.ts');
const PER_WRITER = 400;

function runWorker(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? -1));
  });
}

describe('two processes appending to one conversation', () => {
  it('test_lose_duplicate_and_reorder_nothing', async () => {
    const home = tempDir();
    const { core, conversation } = seedConversation(home);
    core.close();
    const go = path.join(home, 'go');
    const writers = ['left', 'right'].map((writer) => runWorker([home, 'default', conversation.id, writer, String(PER_WRITER), go]));
    fs.writeFileSync(go, '');
    expect(await Promise.all(writers)).toEqual([0, 0]);

    const reopened = new DataFolder(home);
    const store = reopened.store(parseNamespace('default'));
    const events = [...store.journal.read(conversation.id)];
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 2 * PER_WRITER }, (_, i) => i + 1));
    for (const writer of ['left', 'right']) {
      const mine = events.map((e) => e.payload as { writer: string; i: number }).filter((p) => p.writer === writer).map((p) => p.i);
      expect(mine).toEqual(Array.from({ length: PER_WRITER }, (_, i) => i));
    }
    expect(store.journal.verify(conversation.id)).toEqual({ ok: true, count: 2 * PER_WRITER });
    reopened.close();
  });
});
