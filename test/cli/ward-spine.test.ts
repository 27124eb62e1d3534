import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../main/cli/commands/index.js';
import { LATEST_SCHEMA_VERSION } from '../../main/store/migrations/index.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

function conversationWithEvents(count: number) {
  const home = tempDir();
  const { core, store, conversation } = seedConversation(home);
  for (let i = 1; i <= count; i++) store.journal.append(conversation.id, { type: 'assistant_text', payload: { text: `line ${i}` } });
  core.close();
  return { home, conversation, file: store.file };
}

describe('ward (headless)', () => {
  it('test_prints_usage_and_exits_2_without_a_command_names_an_unknown_command', async () => {
    expect((await ward([])).code).toBe(2);
    const unknown = await ward(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('ward: unknown command "frobnicate"; run "ward help"\n');
  });

  it('test_help_lists_every_command_with_what_it_does_and_a_commands_help_shows_its_usage_and_the_same_words', async () => {
    const help = await ward(['help']);
    expect(help.code).toBe(0);
    const listed = help.stdout.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.trim().split(/\s{2,}/));
    expect(listed.map(([name]) => name)).toEqual(COMMANDS.map((entry) => entry.name));
    for (const [, summary] of listed) expect(summary!.length).toBeGreaterThan(10);
    const run = await ward(['run', '--help']);
    const command = await COMMANDS.find((entry) => entry.name === 'run')!.load();
    expect(run.stdout).toBe(`usage: ${command.usage}\n\n${listed.find(([name]) => name === 'run')![1]}\n\n${command.details}\n`);
  });

  it('test_refuses_an_unknown_flag_with_the_command_usage', async () => {
    const result = await ward(['conversations', '--colour'], { env: { WARD_HOME: tempDir() } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Unknown option '--colour'/);
    expect(result.stderr).toMatch(/usage: ward conversations/);
  });

  it('test_creates_and_lists_namespaces_refusing_an_invalid_name_with_the_rule', async () => {
    const env = { WARD_HOME: tempDir() };
    expect((await ward(['namespace', 'create', 'work'], { env })).stdout).toBe('created namespace work\n');
    const bad = await ward(['namespace', 'create', 'Work!'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('ward namespace: invalid namespace name "Work!": use lowercase letters, digits and "-", 1 to 32 characters\n');
    const listed = await ward(['namespace', 'list', '--json'], { env });
    expect(listed.stdout.trim().split('\n').map((line) => JSON.parse(line).name)).toEqual(['work']);
  });

  it('test_fails_closed_when_namespace_and_ward_namespace_disagree', async () => {
    const result = await ward(['conversations', '--namespace', 'work'], { env: { WARD_HOME: tempDir(), WARD_NAMESPACE: 'personal' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/conflicting namespace settings/);
  });

  it('test_lists_conversations_and_replays_a_journal_from_a_cursor_as_text_and_as_ndjson', async () => {
    const { home, conversation } = conversationWithEvents(5);
    const env = { WARD_HOME: home };
    const listed = await ward(['conversations', '--json'], { env });
    expect(JSON.parse(listed.stdout)).toMatchObject({ id: conversation.id, agent: 'helper', agentVersion: 1, events: 5, activeRun: null });

    const human = await ward(['replay', conversation.id, '--from', '4'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split('\n').map((line) => line.split(' ')[0])).toEqual(['#4', '#5']);
    expect(human.stdout).toContain('line 4');

    const json = await ward(['replay', conversation.id.slice(0, 8), '--json'], { env });
    const events = json.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(events[0]).toMatchObject({ type: 'assistant_text', payload: { text: 'line 1' } });
  });

  it('test_verify_passes_an_intact_journal_and_names_the_first_tampered_event_exiting_3', async () => {
    const { home, conversation, file } = conversationWithEvents(6);
    const env = { WARD_HOME: home };
    expect(await ward(['verify', conversation.id], { env })).toMatchObject({ code: 0, stdout: 'ok: 6 events, hash chain intact\n' });

    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    db.prepare(`UPDATE events SET payload = '{"text":"forged"}' WHERE seq = 4`).run();
    db.close();
    const tampered = await ward(['verify', conversation.id], { env });
    expect(tampered.code).toBe(3);
    expect(tampered.stdout).toBe('TAMPERED: first bad event is #4: event 4 was altered\n');
  });

  it('test_reports_a_corrupt_namespace_database_in_doctor_exits_non_zero_and_leaves_the_file_as_it_was', async () => {
    const { home, file } = conversationWithEvents(1);
    const garbage = Buffer.from('not sqlite at all '.repeat(50));
    fs.rmSync(`${file}-wal`, { force: true });
    fs.rmSync(`${file}-shm`, { force: true });
    fs.writeFileSync(file, garbage);
    const result = await ward(['doctor', '--json'], { env: { WARD_HOME: home } });
    expect(result.code).toBe(1);
    const checks = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(checks).toContainEqual(expect.objectContaining({ status: 'error', detail: expect.stringContaining(`${file} is not a SQLite database`) }));
    expect(fs.readFileSync(file).equals(garbage)).toBe(true);

    const replay = await ward(['conversations'], { env: { WARD_HOME: home } });
    expect(replay.code).toBe(4);
    expect(replay.stderr).toContain(file);
  });

  it('test_doctor_reports_each_part_honestly_data_folder_namespaces_keychain_pinned_cli', async () => {
    const { home } = conversationWithEvents(1);
    const result = await ward(['doctor', '--json'], { env: { WARD_HOME: home } });
    const checks = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(checks.map((c) => c.check)).toEqual(expect.arrayContaining(['data folder', 'namespace default', 'keychain', 'pinned CLI']));
    expect(checks.find((c) => c.check === 'namespace default')).toMatchObject({ status: 'ok', data: { schemaVersion: LATEST_SCHEMA_VERSION, integrity: 'ok' } });
    // No D-Bus in this environment block: the keychain must be reported unreachable, never "ok".
    expect(checks.find((c) => c.check === 'keychain')).toMatchObject({ status: 'error' });
  });
});

describe('ward doctor with the real keychain', () => {
  it('test_reports_the_keychain_reachable_on_the_test_session_bus', async () => {
    const bus = process.env.DBUS_SESSION_BUS_ADDRESS;
    expect(bus, 'run the tests through `npm test` (scripts/with-test-services.mjs starts gnome-keyring)').toBeTruthy();
    const result = await ward(['doctor', '--json'], { env: { WARD_HOME: tempDir(), DBUS_SESSION_BUS_ADDRESS: bus } });
    const checks = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(checks.find((c) => c.check === 'keychain')).toMatchObject({ status: 'ok' });
  });
});

describe('a namespace fixed by admin policy', () => {
  it('test_is_the_default_and_a_different_namespace_fails_closed', async () => {
    const home = tempDir();
    const policy = `${tempDir()}/policy.json`;
    fs.writeFileSync(policy, JSON.stringify({ version: 1, namespace: 'work' }), { mode: 0o644 });
    const env = { WARD_HOME: home, WARD_POLICY: policy };
    expect((await ward(['namespace', 'create', 'work'], { env })).code).toBe(0);
    expect(await ward(['conversations'], { env })).toMatchObject({ code: 0, stderr: '' });
    const other = await ward(['conversations', '--namespace', 'personal'], { env });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/conflicting namespace settings \(flag="personal", policy="work"\)/);
  });
});

describe('a reader that goes away', () => {
  it('test_ends_ward_replay_quietly_with_exit_0_when_the_pipe_closes_after_the_first_line', async () => {
    const { home, conversation } = conversationWithEvents(3_000);
    const { spawn } = await import('node:child_process');
    const { WARD_BIN } = await import('../support/ward-cli.js');
    const child = spawn(process.execPath, [WARD_BIN, 'replay', conversation.id], { env: { PATH: process.env.PATH, WARD_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('replaying streamed text', () => {
  it('test_shows_a_completed_answer_once_and_the_deltas_of_an_answer_cut_short_as_one_line', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    store.journal.appendMany(conversation.id, [
      { type: 'assistant_delta', payload: { text: 'Hel', messageIndex: 0 } },
      { type: 'assistant_delta', payload: { text: 'lo.', messageIndex: 0 } },
      { type: 'assistant_text', payload: { text: 'Hello.' } },
      { type: 'assistant_delta', payload: { text: 'Cut ', messageIndex: 1 } },
      { type: 'assistant_delta', payload: { text: 'short', messageIndex: 1 } },
      { type: 'run_finished', payload: { state: 'stopped', reason: 'stopped by the user' } },
    ]);
    core.close();
    const human = await ward(['replay', conversation.id], { env: { WARD_HOME: home } });
    const lines = human.stdout.trim().split('\n');
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['#3', '#4', '#6']);
    expect(lines[0]).toContain('assistant_text  Hello.');
    expect(lines[1]).toContain('assistant_delta  Cut short');
    const json = await ward(['replay', conversation.id, '--json'], { env: { WARD_HOME: home } });
    expect(json.stdout.trim().split('\n')).toHaveLength(6);
  });
});

describe('replaying events that do not parse', () => {
  it('test_prints_each_as_an_unreadable_event_with_its_stored_type_and_why_and_goes_on', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    store.journal.appendMany(conversation.id, [
      { type: 'run_finished', payload: { outcome: 'cancelled' } },
      { type: 'stop_requested', payload: {} },
      { type: 'tool_result', payload: { toolUseId: 't1', tool: 'echo', ok: 'yes', bytes: 1, durationMs: 1, errorCode: null, preview: '', previewTruncated: false } },
      { type: 'assistant_text', payload: { text: 'after' } },
    ]);
    core.close();
    const human = await ward(['replay', conversation.id], { env: { WARD_HOME: home } });
    expect(human.code).toBe(0);
    const lines = human.stdout.trim().split('\n').map((line) => line.replace(/^(#\d+) \S+ /, '$1 '));
    expect(lines).toEqual([
      expect.stringMatching(/^#1 run_finished {2}unreadable event: payload\.state: Invalid option: expected one of /),
      '#2 stop_requested  unreadable event: no event of this type is written by Ward',
      '#3 tool_result  unreadable event: payload: Invalid input',
      '#4 assistant_text  after',
    ]);
  });
});
