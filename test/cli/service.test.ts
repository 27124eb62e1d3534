/**
 * The `ward` background service (issue 29) as a person meets it: the built `ward` command, the
 * real pinned CLI in the OS sandbox, a scripted model provider, real SQLite files, a real second
 * uid (setpriv). The service lives in XDG_RUNTIME_DIR; the other tests' environments have none,
 * so their turns run in-process.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { namespaceDir, parseNamespace } from '../../main/namespaces/namespace.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { EXIT } from '../../main/base/errors.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { processesWith } from '../app/runs/agents.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { until } from '../support/wait.js';
import { WARD_BIN, ward } from '../support/ward-cli.js';

let provider: ModelProvider | undefined;
const scratch: string[] = [];
const clients: ChildProcess[] = [];
let servicePid: number | undefined;

afterEach(async () => {
  for (const client of clients.splice(0)) if (client.exitCode === null) client.kill('SIGKILL');
  if (servicePid !== undefined) kill(servicePid);
  servicePid = undefined;
  for (const dir of scratch.splice(0)) {
    for (const pid of processesWith(dir)) kill(pid);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await provider?.close();
  provider = undefined;
});

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

interface Setup {
  readonly home: string;
  readonly runtime: string;
  readonly env: NodeJS.ProcessEnv;
}

function setup(): Setup {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-service-'));
  scratch.push(root);
  const home = path.join(root, 'home');
  const tmp = path.join(root, 'tmp');
  const runtime = path.join(root, 'run-user');
  for (const dir of [home, tmp, runtime]) fs.mkdirSync(dir, { mode: 0o700 });
  // Readable to the other uid below only as far as it needs: the folders a socket path crosses.
  fs.chmodSync(root, 0o711);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  return { home, runtime, env: { PATH: process.env.PATH, HOME: home, TMPDIR: tmp, WARD_HOME: home, XDG_RUNTIME_DIR: runtime, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider!.url } };
}

async function status(env: NodeJS.ProcessEnv): Promise<{ running: boolean; pid?: number }> {
  const result = await ward(['service', 'status', '--json'], { env });
  return JSON.parse(result.stdout) as { running: boolean; pid?: number };
}

/** The service's socket, found as the service made it. */
function socketOf(runtime: string): string {
  const [folder] = fs.readdirSync(runtime).filter((name) => name.startsWith('ward-'));
  return path.join(runtime, folder!, 'service.sock');
}

/** The pinned CLI processes below `pid`, by the session id on their command line. */
function cliSessionsUnder(pid: number): Map<string, number> {
  const parents = new Map<number, number>();
  const sessions = new Map<number, string>();
  for (const entry of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue;
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const flag = argv.indexOf('--session-id');
      if (flag >= 0 && !argv.includes('bwrap') && !argv[0]!.endsWith('bwrap')) sessions.set(Number(entry), argv[flag + 1]!);
    } catch {
      // gone meanwhile
    }
  }
  const below = (child: number): boolean => {
    for (let at = parents.get(child); at !== undefined && at > 1; at = parents.get(at)) if (at === pid) return true;
    return false;
  };
  return new Map([...sessions].filter(([child]) => below(child)).map(([child, session]) => [session, child]));
}

function cliSessionOf(home: string, conversationId: string): string {
  const folder = new DataFolder(home);
  try {
    return folder.store(parseNamespace('default'), { mustExist: true }).conversations.get(conversationId).cliSessionId;
  } finally {
    folder.close();
  }
}

const conversationOf = (stderr: string) => /conversation ([0-9a-f-]{36})/.exec(stderr)![1]!;

describe('the ward background service', () => {
  it('test_first_run_starts_it_a_new_conversation_then_takes_the_cli_started_ahead_other_grants_do_not_and_stop_ends_it', async () => {
    provider = await startModelProvider(['One.', 'Two.', 'Three.'].map((text) => ({ blocks: [{ type: 'text' as const, text }] })));
    const { home, env } = setup();
    const first = await ward(['run', '--new', '--', 'hi'], { env, timeoutMs: 60_000 });
    expect(first.stderr).toContain('ward: started the background service');
    expect([first.code, first.stdout]).toEqual([0, 'One.\n']);
    const running = await status(env);
    expect(running.running).toBe(true);
    servicePid = running.pid!;

    // The first conversation's CLI stays warm; a second is started for the next new conversation.
    const firstSession = cliSessionOf(home, conversationOf(first.stderr));
    await until(() => [...cliSessionsUnder(servicePid!).keys()].some((session) => session !== firstSession), 'a CLI started ahead', 30_000);
    const ahead = [...cliSessionsUnder(servicePid).keys()].find((session) => session !== firstSession)!;
    // S4: the CLI started ahead holds a run capability, never the key.
    for (const pid of cliSessionsUnder(servicePid).values()) expect(fs.readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain(CANARY_KEY);

    const second = await ward(['run', '--new', '--', 'again'], { env, timeoutMs: 60_000 });
    expect([second.code, second.stdout]).toEqual([0, 'Two.\n']);
    expect(second.stderr).not.toContain('started the background service');
    expect(cliSessionOf(home, conversationOf(second.stderr))).toBe(ahead);

    // A turn with other grants must not run in a CLI whose sandbox was made for the last ones.
    await until(() => cliSessionsUnder(servicePid!).size >= 2 && ![...cliSessionsUnder(servicePid!).keys()].every((s) => s === firstSession || s === ahead), 'the next CLI started ahead', 30_000);
    const nextAhead = [...cliSessionsUnder(servicePid).keys()].find((session) => session !== firstSession && session !== ahead)!;
    const granted = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-service-grant-'));
    scratch.push(granted);
    const third = await ward(['run', '--new', `--allow-read=${granted}`, '--', 'with a grant'], { env, timeoutMs: 60_000 });
    expect([third.code, third.stdout]).toEqual([0, 'Three.\n']);
    expect(cliSessionOf(home, conversationOf(third.stderr))).not.toBe(nextAhead);
    await until(() => !cliSessionsUnder(servicePid!).has(nextAhead), 'the CLI started for other grants to be closed');

    const stopped = await ward(['service', 'stop'], { env, timeoutMs: 40_000 });
    expect([stopped.code, stopped.stdout]).toEqual([0, 'ward service: stopped (its turns were stopped first)\n']);
    await until(() => !alive(servicePid!), 'the service to exit');
    expect(cliSessionsUnder(servicePid).size).toBe(0);
    // The CLIs started for conversations that never came left no folders behind: only the three conversations have theirs.
    const made = [first, second, third].map((result) => conversationOf(result.stderr)).sort();
    expect(fs.readdirSync(path.join(namespaceDir(home, parseNamespace('default')), 'conversations')).sort()).toEqual(made);
    expect((await status(env)).running).toBe(false);
  }, 180_000);

  it('test_refuses_another_uid_the_folder_is_closed_to_it_and_without_the_token_it_gets_nothing', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'Mine.' }] }, { blocks: [{ type: 'text', text: 'In process.' }] }]);
    const { runtime, env } = setup();
    expect((await ward(['run', '--new', '--', 'hi'], { env, timeoutMs: 60_000 })).code).toBe(0);
    servicePid = (await status(env)).pid!;
    const socket = socketOf(runtime);
    // As nobody (uid 65534): connect, then present a made-up token and ask for a turn.
    const asNobody = (script: string) =>
      spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script, socket], { cwd: '/', encoding: 'utf8', timeout: 20_000 });
    const tryIt = `
      const net = require('node:net'); const fs = require('node:fs');
      const sock = process.argv[1];
      try { fs.readFileSync(require('node:path').join(require('node:path').dirname(sock), 'token')); console.log('token read'); } catch (e) { console.log('token ' + e.code); }
      const c = net.createConnection(sock);
      let got = '';
      c.on('data', (d) => (got += d));
      c.on('connect', () => c.write(JSON.stringify({ t: 'hello', token: '00'.repeat(32), build: 'x', env: 'y' }) + '\\n' + JSON.stringify({ t: 'run', args: ['--new', '--', 'steal'], cwd: '/', tty: {} }) + '\\n'));
      c.on('error', (e) => console.log('connect ' + e.code));
      c.on('close', () => console.log('closed, answered ' + JSON.stringify(got)));`;
    expect(asNobody(tryIt).stdout).toBe('token EACCES\nconnect EACCES\nclosed, answered ""\n');

    // Even with the folder opened by mistake, the socket answers nothing without the token, and runs nothing.
    const folder = path.dirname(socket);
    fs.chmodSync(runtime, 0o755);
    fs.chmodSync(folder, 0o755);
    fs.chmodSync(socket, 0o777);
    expect(asNobody(tryIt).stdout).toBe('token EACCES\nclosed, answered ""\n');
    expect(provider.conversationRequests()).toHaveLength(1);
    // And this user's next turn does not use a folder others may enter: it runs in-process, saying why.
    const own = await ward(['run', '--new', '--', 'hi'], { env, timeoutMs: 60_000 });
    expect([own.code, own.stdout]).toEqual([0, 'In process.\n']);
    expect(own.stderr).toContain(`ward: running this turn in this process: ${folder} is not a folder only you can enter`);
  }, 120_000);

  it('test_a_client_killed_mid_turn_stops_its_turn_and_a_service_killed_with_kill_9_leaves_it_uncertain', async () => {
    provider = await startModelProvider([{ kind: 'hang' }, { kind: 'hang' }]);
    const { home, env } = setup();
    const startClient = () => {
      const client = spawn(process.execPath, [WARD_BIN, 'run', '--new', '--', 'wait'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      clients.push(client);
      let stderr = '';
      client.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      client.stdin.end();
      return { client, stderr: () => stderr };
    };
    const replay = async (conversation: string) => (await ward(['replay', conversation, '--json'], { env })).stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: { state?: string; reason?: string } });

    const killed = startClient();
    await until(() => /run [0-9a-f-]{36}/.test(killed.stderr()) && provider!.conversationRequests().length === 1, 'the first turn to reach the model', 60_000);
    servicePid = (await status(env)).pid!;
    killed.client.kill('SIGKILL');
    const first = conversationOf(killed.stderr());
    let finished: { state?: string; reason?: string } | undefined;
    for (let i = 0; i < 100 && finished === undefined; i += 1) {
      finished = (await replay(first)).find((event) => event.type === 'run_finished')?.payload;
      if (finished === undefined) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(finished).toMatchObject({ state: 'stopped', reason: 'the terminal was closed (SIGHUP)' });

    const orphaned = startClient();
    await until(() => /run [0-9a-f-]{36}/.test(orphaned.stderr()) && provider!.conversationRequests().length === 2, 'the second turn to reach the model', 60_000);
    process.kill(servicePid, 'SIGKILL');
    const code = await new Promise<number | null>((resolve) => orphaned.client.once('close', resolve));
    expect(code).toBe(EXIT.uncertain);
    expect(orphaned.stderr()).toContain('ward: the background service ended before the turn did');
    // R8: the next turn of that conversation finds its run uncertain and refuses until it is reconciled.
    const next = await ward(['run', '--conversation', conversationOf(orphaned.stderr()), '--', 'go on'], { env: { ...env, WARD_SERVICE: 'off' }, timeoutMs: 60_000 });
    expect(next.code).not.toBe(0);
    expect(next.stderr).toMatch(/uncertain/);
    expect(cliSessionOf(home, first)).toMatch(/^[0-9a-f-]{36}$/);
  }, 180_000);

  it('test_ward_service_stop_during_a_turn_stops_it_and_its_ward_run_says_so_with_exit_130', async () => {
    provider = await startModelProvider([{ kind: 'hang' }]);
    const { env } = setup();
    const client = spawn(process.execPath, [WARD_BIN, 'run', '--new', '--', 'wait'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    clients.push(client);
    let stderr = '';
    client.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client.stdin.end();
    await until(() => provider!.conversationRequests().length === 1, 'the turn to reach the model', 60_000);
    servicePid = (await status(env)).pid!;
    const closed = new Promise<number | null>((resolve) => client.once('close', resolve));
    expect((await ward(['service', 'stop'], { env, timeoutMs: 40_000 })).code).toBe(0);
    expect(await closed).toBe(EXIT.stopped);
    expect(stderr).toContain('ward: stopped: Ward is shutting down');
    expect(stderr).not.toContain('ended before the turn did');
  }, 120_000);

  it('test_an_admin_policy_that_turns_it_off_keeps_every_turn_in_process_without_starting_one_each_time', async () => {
    provider = await startModelProvider(['Refused.', 'Again.'].map((text) => ({ blocks: [{ type: 'text' as const, text }] })));
    const { home, env } = setup();
    const policy = path.join(path.dirname(home), 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ backgroundService: false }));
    const withPolicy = { ...env, WARD_POLICY: policy };
    const first = await ward(['run', '--new', '--', 'hi'], { env: withPolicy, timeoutMs: 60_000 });
    expect([first.code, first.stdout]).toEqual([0, 'Refused.\n']);
    expect(first.stderr).toMatch(/ward: running this turn in this process: the admin policy \(\S*policy\.json\) turns the background service off\n/);
    // The service it started heard the policy and exited; the next turn does not start another.
    expect((await status(withPolicy)).running).toBe(false);
    const second = await ward(['run', '--new', '--', 'hi'], { env: withPolicy, timeoutMs: 60_000 });
    expect([second.code, second.stdout]).toEqual([0, 'Again.\n']);
    expect(second.stderr).not.toContain('started the background service');
    expect(second.stderr).toContain('turns the background service off');
  }, 120_000);

  it('test_off_another_environment_and_a_bad_setting_run_the_turn_in_process', async () => {
    provider = await startModelProvider(['Off.', 'Started.', 'Other key.'].map((text) => ({ blocks: [{ type: 'text' as const, text }] })));
    const { env } = setup();
    const off = await ward(['run', '--new', '--', 'hi'], { env: { ...env, WARD_SERVICE: 'off' }, timeoutMs: 60_000 });
    expect([off.code, off.stdout, off.stderr.includes('background service')]).toEqual([0, 'Off.\n', false]);
    expect((await status(env)).running).toBe(false);

    const bad = await ward(['run', '--new', '--', 'hi'], { env: { ...env, WARD_SERVICE: 'maybe' } });
    expect([bad.code, bad.stderr]).toEqual([EXIT.usage, 'ward run: WARD_SERVICE is "on" or "off", not "maybe"\n']);

    expect((await ward(['run', '--new', '--', 'hi'], { env, timeoutMs: 60_000 })).stdout).toBe('Started.\n');
    servicePid = (await status(env)).pid!;
    const other = await ward(['run', '--new', '--', 'hi'], { env: { ...env, ANTHROPIC_API_KEY: `${CANARY_KEY}-other` }, timeoutMs: 60_000 });
    expect([other.code, other.stdout]).toEqual([0, 'Other key.\n']);
    expect(other.stderr).toContain('ward: running this turn in this process: the background service was started with a different environment');
  }, 120_000);
});
