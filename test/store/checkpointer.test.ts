/**
 * WAL checkpoints run on a worker thread (issue 19: on the main thread each one's fsync held up
 * the live stream). What a user relies on: the journal still reaches the database file while
 * Ward runs, and closing leaves one self-contained file, as before.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DataFolder } from '../../main/store/data-folder.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';

describe('WAL checkpoints off the main thread', () => {
  it('test_a_burst_of_appends_reaches_the_database_file_without_the_main_connection_checkpointing_and_closing_leaves_no_wal', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    const before = fs.statSync(store.file).size;
    // The main connection never checkpoints on its own here: its automatic backstop is far away.
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
    const mainThreadPragmas: string[] = [];
    const pragma = store.db.pragma.bind(store.db);
    store.db.pragma = ((source: string, options?: { simple?: boolean }) => {
      mainThreadPragmas.push(source);
      return pragma(source, options);
    }) as typeof store.db.pragma;
    for (let i = 0; i < 300; i++) store.journal.append(conversation.id, { type: 'assistant_text', payload: { text: `line ${i} ${'x'.repeat(300)}` } });
    // Only a checkpoint copies WAL pages into the database file: the worker did it.
    await until(() => fs.statSync(store.file).size > before, 'the checkpoint to grow the database file');
    expect(mainThreadPragmas.filter((source) => source.startsWith('wal_checkpoint'))).toEqual([]);
    const file = store.file;
    core.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);

    const reopened = new DataFolder(home);
    try {
      const journal = reopened.store(parseNamespace('default')).journal;
      expect([...journal.read(conversation.id)].filter((event) => event.type === 'assistant_text')).toHaveLength(300);
    } finally {
      reopened.close();
    }
  });
});
