/**
 * Issue 26, X1 and X2 with real parts: a deny-read file's bytes reach neither the blob store nor
 * `ward changes --diff` nor an export (whose transcripts show the other files' diffs); a symlink to /etc/passwd is recorded as a link, never read;
 * a real `ward rewind` killed with SIGKILL mid-way is finished by the next `ward changes`, or by
 * any `ward` command that opens the namespace; a real `ward run` killed with SIGKILL mid-snapshot
 * leaves nothing half-written that counts, the next `ward` sweeps what it left, and the next run
 * tracks its own changes.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileChange } from '../../common/events.js';
import { namespaceDir, parseNamespace } from '../../main/namespaces/namespace.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { startModelProvider, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { CANARY_KEY, closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';
import { ward, WARD_BIN } from '../support/ward-cli.js';
import { wardInProcess } from '../support/ward-in-process.js';
import { bash, DONE } from '../sandbox/steps.js';
import { filesHolding, treeHash } from './tree.js';

closeHarnessesAfterEach();

const CANARY_BEFORE = 'deny-read-canary-5c81f0e2';
const CANARY_AFTER = 'deny-read-canary-93ad7b44';

function workspace(): string {
  const dir = path.join(fs.realpathSync(tempDir('ward-changes-canary-')), 'workspace');
  fs.mkdirSync(dir);
  return dir;
}

const changesOf = (harness: Harness, conversationId: string) => payloads<{ changes: FileChange[] }>(harness.events(conversationId), 'files_changed').flatMap((event) => event.changes);
const wardEnv = (harness: Harness) => ({ ...harness.env, WARD_HOME: harness.home });
/** For a spawned `ward`: the data folder and the test session's keychain, not the harness's hostile variables. */
const spawnEnv = (harness: Harness) => ({ WARD_HOME: harness.home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS });

describe('what the change tracker never keeps', () => {
  it('test_a_deny_read_file_is_known_by_hash_and_size_only_and_a_symlink_to_etc_passwd_is_a_link_never_read', async () => {
    const dir = workspace();
    const env = path.join(dir, '.env');
    fs.writeFileSync(env, `TOKEN=${CANARY_BEFORE}\n`);
    // The first answer streams slowly: the files change while the turn runs, as another process would change them.
    const slow: ScriptStep = { blocks: [{ type: 'text', text: 'thinking about what to do with these files for a while' }], deltaDelayMs: 200 };
    const harness = await startHarness([slow]);
    const permissions = parsePermissionFlags([`--allow-write=${dir}`, `--deny-read=${env}`], dir);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'wait', permissions, workspace: dir });
    await until(() => harness.provider.conversationRequests().length === 1, 'the model call');
    fs.writeFileSync(env, `TOKEN=${CANARY_AFTER}\n`);
    fs.symlinkSync('/etc/passwd', path.join(dir, 'passwd-link'));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'a line the reviewer sees\n');
    expect((await handle.done).state).toBe('succeeded');

    const changes = new Map(changesOf(harness, handle.conversationId).map((change) => [change.path, change]));
    expect(changes.get('.env')).toMatchObject({
      change: 'modified',
      before: { kind: 'file', size: CANARY_BEFORE.length + 7, stored: false, reason: 'deny-read', hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      after: { kind: 'file', size: CANARY_AFTER.length + 7, stored: false, reason: 'deny-read' },
    });
    expect(changes.get('passwd-link')).toMatchObject({ change: 'added', after: { kind: 'link', target: '/etc/passwd', stored: false } });

    const store = path.join(namespaceDir(harness.home, harness.ns), 'changes');
    for (const needle of [CANARY_BEFORE, CANARY_AFTER, 'root:x:0:0']) expect(filesHolding(store, needle)).toEqual([]);
    const shown = await wardInProcess(['changes', handle.conversationId, '--diff'], wardEnv(harness));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('(content not shown: deny-read)');
    expect(shown.stdout).toContain('symlink to /etc/passwd');
    const json = await wardInProcess(['changes', handle.conversationId, '--diff', '--json'], wardEnv(harness));
    for (const output of [shown.stdout, json.stdout]) {
      expect(output).not.toContain(CANARY_BEFORE);
      expect(output).not.toContain(CANARY_AFTER);
      expect(output).not.toContain('root:x:0:0');
    }
    const out = tempDir('ward-changes-export-');
    for (const format of ['markdown', 'html', 'bundle']) {
      const file = path.join(out, `chat.${format}`);
      const exported = await ward(['export', handle.conversationId, '--format', format, '--out', file], { env: spawnEnv(harness) });
      expect(exported.stderr).toBe('');
      const text = fs.readFileSync(file, 'utf8');
      expect(text).not.toContain(CANARY_BEFORE);
      expect(text).not.toContain(CANARY_AFTER);
    }
    // The transcripts carry the change event and its diffs, so the reviewer sees what changed on the disk.
    for (const format of ['markdown', 'html']) {
      const text = fs.readFileSync(path.join(out, `chat.${format}`), 'utf8');
      expect(text).toContain('3 files changed (2 added, 1 modified)');
      expect(text).toContain('+a line the reviewer sees');
      expect(text).toContain('(content not shown: deny-read)');
    }
  });
});

const FILES = 400;
const name = (index: number) => `big/${String(index).padStart(3, '0')}.bin`;

/** A real `ward rewind` of a turn that grew 400 files, SIGKILLed once the first file is back and before the last. */
async function killedRewind(): Promise<{ harness: Harness; dir: string; conversationId: string; before: string }> {
  const dir = workspace();
  fs.mkdirSync(path.join(dir, 'big'));
  for (let index = 0; index < FILES; index += 1) fs.writeFileSync(path.join(dir, name(index)), Buffer.alloc(256 * 1024, index % 251));
  fs.writeFileSync(path.join(dir, 'grow.sh'), 'for f in big/*.bin; do echo more >> "$f"; done\n');
  const harness = await startHarness([bash(`cd ${dir} && sh grow.sh`), DONE]);
  const before = treeHash(dir);
  const permissions = parsePermissionFlags([`--allow-write=${dir}`, '--allow-run=sh,cd'], dir);
  const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'grow them', permissions, workspace: dir });
  expect((await handle.done).state).toBe('succeeded');
  expect(changesOf(harness, handle.conversationId)).toHaveLength(FILES);
  const after = treeHash(dir);

  const child = spawn(process.execPath, [WARD_BIN, 'rewind', handle.conversationId, '--to', handle.runId], { env: { PATH: process.env.PATH, HOME: harness.home, WARD_HOME: harness.home }, stdio: 'ignore' });
  const restored = (index: number) => fs.statSync(path.join(dir, name(index))).size === 256 * 1024;
  // Spins (no timers): the rewind takes a fraction of a second; it is killed once the first file is back and before the last.
  const deadline = Date.now() + 30_000;
  while (!restored(0) && Date.now() < deadline);
  const midWay = !restored(FILES - 1);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  expect(midWay).toBe(true);
  expect(restored(FILES - 1)).toBe(false);
  expect(treeHash(dir)).not.toBe(before);
  expect(treeHash(dir)).not.toBe(after);
  expect(payloads(harness.events(handle.conversationId), 'files_rewound')).toHaveLength(0);
  return { harness, dir, conversationId: handle.conversationId, before };
}

describe('a rewind killed mid-way', () => {
  it('test_a_ward_rewind_killed_with_sigkill_mid_way_is_finished_by_the_next_ward_changes', async () => {
    const { harness, dir, conversationId, before } = await killedRewind();
    const next = await ward(['changes', conversationId], { env: spawnEnv(harness) });
    expect(next.stderr).toBe('');
    expect(treeHash(dir)).toBe(before);
    const rewound = payloads<{ resumed: boolean; changes: FileChange[] }>(harness.events(conversationId), 'files_rewound');
    expect(rewound).toHaveLength(1);
    expect(rewound[0]).toMatchObject({ resumed: true });
    expect(rewound[0]!.changes).toHaveLength(FILES);
    expect(next.stdout).toContain('finished after an interruption');
  });

  it('test_a_ward_rewind_killed_with_sigkill_mid_way_is_finished_when_an_unrelated_ward_command_opens_the_namespace', async () => {
    const { harness, dir, conversationId, before } = await killedRewind();
    const next = await ward(['conversations'], { env: spawnEnv(harness) });
    expect(next.stderr).toBe('');
    expect(next.code).toBe(0);
    expect(treeHash(dir)).toBe(before);
    expect(payloads<{ resumed: boolean }>(harness.events(conversationId), 'files_rewound')).toMatchObject([{ resumed: true }]);
  });
});

describe('a snapshot killed mid-way', () => {
  it('test_a_ward_run_killed_with_sigkill_mid_snapshot_leaves_no_half_store_and_the_next_run_tracks_its_changes', async () => {
    const dir = workspace();
    for (let index = 0; index < 1000; index += 1) {
      if (index % 100 === 0) fs.mkdirSync(path.join(dir, `d${index / 100}`));
      fs.writeFileSync(path.join(dir, `d${Math.floor(index / 100)}`, `f${index}.bin`), Buffer.alloc(16 * 1024, index % 251));
    }
    fs.writeFileSync(path.join(dir, 'add.sh'), 'echo new > "$(dirname "$0")/new.txt"\n');
    const provider = await startModelProvider([bash(`sh ${dir}/add.sh`), DONE]);
    try {
      const home = tempDir('ward-changes-crash-home-');
      fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
      const env = { PATH: process.env.PATH, HOME: home, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider.url };
      const store = path.join(namespaceDir(home, parseNamespace('default')), 'changes');
      const blobs = path.join(store, 'blobs');
      const args = ['run', `--allow-write=${dir}`, '--allow-run=sh', '--', 'change', 'it'];
      const child = spawn(process.execPath, [WARD_BIN, ...args], { env, cwd: dir, stdio: 'ignore' });
      const listed = () => (fs.existsSync(blobs) ? fs.readdirSync(blobs) : []);
      // Spins (no timers): killed the moment the snapshot's pack exists and before its index does.
      const deadline = Date.now() + 30_000;
      while (!listed().some((name) => name.endsWith('.pack')) && Date.now() < deadline);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const killed = listed();
      expect(killed.filter((name) => name.endsWith('.pack'))).toHaveLength(1);
      expect(killed.filter((name) => name.endsWith('.idx'))).toEqual([]);
      // The model is asked nothing before the snapshot is whole: no tool could have run.
      expect(provider.conversationRequests()).toHaveLength(0);
      // The next process to open the namespace, whatever its command, sweeps the pack no index names.
      const unrelated = await ward(['conversations'], { env });
      expect(unrelated.code).toBe(0);
      expect(listed()).not.toContain(killed[0]);

      const next = await ward(['run', '--json', ...args], { env, cwd: dir, timeoutMs: 120_000 });
      expect(next.code).toBe(0);
      const events = next.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: { changes?: FileChange[] } });
      expect(events.filter((event) => event.type === 'files_untracked')).toEqual([]);
      expect(events.filter((event) => event.type === 'files_changed').flatMap((event) => event.payload.changes)).toMatchObject([{ change: 'added', path: 'new.txt' }]);
      const after = listed();
      // The killed run's pack is gone; every pack left counts (has its index), and no index file is half-written.
      expect(after).not.toContain(killed[0]);
      for (const name of after.filter((file) => file.endsWith('.pack'))) expect(after).toContain(name.replace(/\.pack$/, '.idx'));
      expect(after.filter((name) => name.includes('.tmp'))).toEqual([]);
      const indexes = fs.readdirSync(path.join(store, 'index'), { recursive: true }) as string[];
      expect(indexes.filter((name) => name.includes('.tmp'))).toEqual([]);
      for (const name of indexes.filter((file) => file.endsWith('.json'))) expect(() => JSON.parse(fs.readFileSync(path.join(store, 'index', name), 'utf8'))).not.toThrow();
    } finally {
      await provider.close();
    }
  });
});
