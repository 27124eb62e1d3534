/**
 * S6: the host's shell start-up files never run for a sandboxed launch. A node-spawned child's
 * stdin is a socket, which bash takes for a remote shell and answers by sourcing
 * /etc/bash.bashrc and ~/.bashrc; BASH_ENV and ENV name files a shell may source too. Whatever
 * those files export must reach no process of the launch, and nothing they do may happen on the host.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { verifyPinnedCli } from '../../main/runner/pin.js';
import { childrenOf, findInnerProcess } from '../../main/runner/process-tree.js';
import { SandboxEngine, runtimeHelpersFolder } from '../../main/sandbox/engine.js';
import { NO_GRANTS } from '../../main/sandbox/files.js';
import { toolResultsSeen, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { CLI_ENV_NAMES } from '../support/child-env.js';
import { tempDir } from '../support/temp.js';
import { payloads, startHarness, type Harness } from '../app/runs/harness.js';
import type { FileChange } from '../../common/events.js';

/** Values a hostile start-up file exports: none may appear in any process of the launch. */
const CANARIES = {
  GITHUB_TOKEN: 'ghp_startupcanary0a1b2c3d4e5f',
  AWS_SECRET_ACCESS_KEY: 'aws-startup-canary-9f8e7d6c',
  ANTHROPIC_API_KEY: 'sk-ant-startup-canary-3c2b1a',
} as const;

/** Every name a process of a sandboxed launch may hold: the CLI's, and what the wrappers on the way to it carry. */
const EXPECTED_NAMES = new Set([...CLI_ENV_NAMES, 'NO_PROXY', 'no_proxy', 'SRT_OBSERVE_SOCK', 'SRT_ENCODED_CMD', 'SRT_ALLOW_NESTED_USERNS', 'ARGV0', 'OLDPWD']);

/**
 * Names the CLI itself sets for the shell its Bash tool starts (it runs inside the sandbox,
 * after every start-up file Ward could have let run).
 */
const CLI_TOOL_NAMES = new Set([
  'CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_CODE_EXECPATH', 'CLAUDE_PID', 'CLAUDE_CODE_SESSION_ID', 'CLAUDE_CODE_CHILD_SESSION',
  'CLAUDE_CODE_SESSION_ATTENDED', 'CLAUDE_CODE_CHILD_NOTES_DIR', 'AI_AGENT', 'SHELL', 'GIT_EDITOR', 'COREPACK_ENABLE_AUTO_PIN',
  'NoDefaultCurrentDirectoryInExePath',
]);

/**
 * Names the CLI sets for the git it runs itself (inside the sandbox, e.g. `git ls-files` to list
 * the workspace): its own hardening of git, seen only when the poll catches that short process.
 */
const CLI_GIT_NAMES = new Set([
  'GIT_ALLOW_PROTOCOL', 'GIT_CONFIG_PARAMETERS', 'GIT_NO_LAZY_FETCH', 'GIT_NO_REPLACE_OBJECTS', 'GIT_TERMINAL_PROMPT',
  'GIT_LFS_SKIP_SMUDGE', 'GIT_LITERAL_PATHSPECS', 'GIT_SSH_COMMAND', 'GIT_TRACE2', 'GIT_TRACE2_PERF', 'GIT_TRACE2_EVENT',
  'LC_ALL', 'LANGUAGE',
]);

interface Hostile {
  readonly markers: string[];
  readonly env: Record<string, string>;
}

/** A hostile ~/.bashrc in `home`, and BASH_ENV and ENV files: each exports the canaries and touches a marker on the host. */
function plantStartupFiles(home: string): Hostile {
  const dir = fs.realpathSync(tempDir('ward-startup-'));
  const exports = Object.entries(CANARIES).map(([name, value]) => `export ${name}=${value}`).join('\n');
  const markers: string[] = [];
  const plant = (file: string, marker: string): string => {
    markers.push(path.join(dir, marker));
    fs.writeFileSync(file, `${exports}\ntouch ${path.join(dir, marker)}\n`);
    return file;
  };
  plant(path.join(home, '.bashrc'), 'bashrc-ran');
  plant(path.join(home, '.profile'), 'profile-ran');
  plant(path.join(home, '.bash_profile'), 'bash-profile-ran');
  const env = { BASH_ENV: plant(path.join(dir, 'bash-env.sh'), 'bash-env-ran'), ENV: plant(path.join(dir, 'env.sh'), 'env-ran') };
  return { markers, env };
}

/** Every process under `pid`, itself included. */
function descendants(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(descendants)];
}

/** Collects the environment of every process under `root` until `done` settles, polling /proc. */
async function watchEnvirons(root: () => number | undefined, done: Promise<unknown>): Promise<Map<string, { argv: string; environ: string[] }>> {
  const seen = new Map<string, { argv: string; environ: string[] }>();
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    const pid = root();
    for (const each of pid === undefined ? [] : descendants(pid)) {
      try {
        const argv = fs.readFileSync(`/proc/${each}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 120);
        const environ = fs.readFileSync(`/proc/${each}/environ`, 'utf8').split('\0').filter(Boolean);
        // A process is kept once per program it runs: a fork shows its parent's until it execs.
        if (argv !== '') seen.set(`${each} ${argv}`, { argv, environ });
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  return seen;
}

function unexpectedNames(environs: Map<string, { argv: string; environ: string[] }>, allowed: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const { argv, environ } of environs.values()) {
    const isGit = argv.startsWith('git ');
    for (const entry of environ) {
      const name = entry.slice(0, entry.indexOf('='));
      if (!allowed.has(name) && !(isGit && CLI_GIT_NAMES.has(name))) found.push(`${name} in ${argv}`);
    }
  }
  return found;
}

const saved: Record<string, string | undefined> = {};
let harness: Harness | undefined;
beforeEach(() => {
  for (const name of ['BASH_ENV', 'ENV']) saved[name] = process.env[name];
});
afterEach(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await harness?.close();
  harness = undefined;
});

function bash(command: string): ScriptStep {
  return { blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'run it' } }] };
}

describe('the host shell start-up files never reach a sandboxed launch (S6)', () => {
  it('test_s6_a_hostile_bashrc_bash_env_and_env_export_nothing_to_any_process_of_a_sandboxed_run_and_never_run_on_the_host', async () => {
    harness = await startHarness([bash('env'), bash('sleep 2'), { blocks: [{ type: 'text', text: 'done' }] }]);
    const hostile = plantStartupFiles(harness.home);
    // Ward's own environment names them, and so does the process the sandbox runtime lives in.
    Object.assign(harness.env, hostile.env);
    Object.assign(process.env, hostile.env);
    const workspace = fs.realpathSync(tempDir('ward-startup-ws-'));
    const permissions = parsePermissionFlags(['--allow-run=env,sleep'], workspace);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'env', permissions, workspace });
    const environs = await watchEnvirons(() => handle.childPid(), handle.done);
    expect((await handle.done).state).toBe('succeeded');

    // The launch was seen whole: the wrappers, the CLI and the tool's shell.
    const pinned = await verifyPinnedCli();
    expect([...environs.values()].some(({ argv }) => argv.startsWith(pinned.path) || argv.includes(path.basename(pinned.path)))).toBe(true);
    expect([...environs.values()].some(({ argv }) => argv.includes('sleep 2'))).toBe(true);
    expect(unexpectedNames(environs, new Set([...EXPECTED_NAMES, ...CLI_TOOL_NAMES]))).toEqual([]);
    const everything = JSON.stringify([...environs.values()]);
    for (const value of Object.values(CANARIES)) expect(everything).not.toContain(value);
    for (const marker of hostile.markers) expect(fs.existsSync(marker), marker).toBe(false);

    // What the model saw of `env`, and what the journal keeps, hold none of it either.
    const printed = toolResultsSeen(harness.provider)[0]!.text;
    expect(printed).toContain('CLAUDE_CONFIG_DIR=');
    const journal = JSON.stringify(harness.events(handle.conversationId));
    for (const value of Object.values(CANARIES)) {
      expect(printed).not.toContain(value);
      expect(journal).not.toContain(value);
    }
    expect(findInnerProcess(handle.childPid()!, pinned.path)).toBeNull();
  });

  it('test_s6_a_sandboxed_server_launch_runs_no_start_up_file_and_holds_only_its_own_environment', async () => {
    const home = fs.realpathSync(tempDir('ward-startup-home-'));
    const hostile = plantStartupFiles(home);
    Object.assign(process.env, hostile.env);
    const engine = new SandboxEngine('require');
    const launch = await engine.launchServer({
      name: 'probe',
      command: { binary: '/usr/bin/sleep', args: ['2'], env: { PATH: process.env.PATH!, HOME: home, API_TOKEN: 'the-servers-own' }, cwd: home },
      files: { programs: ['/usr/bin', runtimeHelpersFolder()], readOnly: [], writable: [home], grants: NO_GRANTS, hidden: [] },
      allowedHosts: [],
    });
    try {
      const child = spawn(launch.binary, [...launch.args], { env: { ...launch.env }, cwd: launch.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const environs = await watchEnvirons(() => child.pid, exited);
      expect(await exited).toBe(0);
      expect([...environs.values()].some(({ argv }) => argv.startsWith('/usr/bin/sleep 2'))).toBe(true);
      // The shell execs bubblewrap: no shell stays between Ward and the sandbox.
      expect([...environs.keys()].some((key) => key.startsWith(`${child.pid} bwrap `))).toBe(true);
      expect(unexpectedNames(environs, new Set([...EXPECTED_NAMES, 'API_TOKEN']))).toEqual([]);
      const everything = JSON.stringify([...environs.values()]);
      for (const value of Object.values(CANARIES)) expect(everything).not.toContain(value);
      for (const marker of hostile.markers) expect(fs.existsSync(marker), marker).toBe(false);
    } finally {
      launch.release();
      await engine.close();
    }
  });

  it('test_s6_a_run_cannot_plant_a_git_hook_or_a_start_up_file_in_a_workspace_that_is_not_wards_working_directory', async () => {
    // The desktop's case: Ward runs from elsewhere (here the checkout), the chat's workspace is a
    // git repository of its own. The runtime protected these only under Ward's working directory.
    const workspace = fs.realpathSync(tempDir('ward-hooks-ws-'));
    expect(process.cwd()).not.toBe(workspace);
    fs.mkdirSync(path.join(workspace, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    // Start-up files the folder already has (a repository's hooks folder, a .bashrc, editor settings).
    const existing = ['.bashrc', '.gitconfig', '.mcp.json'];
    for (const name of existing) fs.writeFileSync(path.join(workspace, name), 'original\n');
    fs.mkdirSync(path.join(workspace, '.vscode'));
    const planted = ['.git/hooks/pre-commit', ...existing, '.vscode/tasks.json'];
    fs.writeFileSync(path.join(workspace, 'plant.sh'), [...planted.map((name) => `echo planted > ${name}`), 'echo fine > notes.txt', ''].join('\n'));
    harness = await startHarness([bash('sh plant.sh'), { blocks: [{ type: 'text', text: 'done' }] }]);
    const permissions = parsePermissionFlags(['--allow-run=sh'], workspace);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'plant', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');
    // An ordinary file is written; nothing that would run by itself later is written or changed.
    expect(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8')).toBe('fine\n');
    expect(fs.existsSync(path.join(workspace, '.git/hooks/pre-commit'))).toBe(false);
    expect(fs.existsSync(path.join(workspace, '.vscode/tasks.json'))).toBe(false);
    for (const name of existing) expect(fs.readFileSync(path.join(workspace, name), 'utf8'), name).toBe('original\n');
  });

  it('test_s6_a_run_cannot_create_a_start_up_file_or_a_nested_repositorys_hook_in_its_workspace_or_a_write_grant', async () => {
    // Folders with none of these yet: the run may write both, and neither is Ward's working directory.
    const { workspace, grant, plant } = plantingFolders();
    harness = await startHarness([bash(`sh plant.sh . ${grant}`), { blocks: [{ type: 'text', text: 'done' }] }]);
    const permissions = parsePermissionFlags(['--allow-run=sh', `--allow-write=${grant}`], workspace);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'plant', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');
    for (const root of [workspace, grant]) {
      expect(fs.readFileSync(path.join(root, 'notes.txt'), 'utf8'), root).toBe('fine\n');
      for (const name of plant) expect(fs.existsSync(path.join(root, name)), path.join(root, name)).toBe(false);
      // What stood in for the missing ones while the run lasted is gone, and no `.git` was made.
      expect(fs.readdirSync(root).sort(), root).toEqual(root === workspace ? ['notes.txt', 'plant.sh', 'sub'] : ['notes.txt', 'sub']);
    }
    // The agent changed two notes, nothing else.
    const changes = payloads<{ changes: FileChange[] }>(harness.events(handle.conversationId), 'files_changed').flatMap((event) => event.changes);
    expect(changes.map((change) => `${change.change} ${change.root} ${change.path}`).sort()).toEqual([`added ${grant} notes.txt`, `added ${workspace} notes.txt`]);
  });

  it('test_s6_a_warm_sessions_stand_ins_for_missing_start_up_files_are_no_change_of_the_agents_and_go_with_the_session', async () => {
    const { workspace, plant } = plantingFolders();
    harness = await startHarness([bash('sh plant.sh .'), { blocks: [{ type: 'text', text: 'done' }] }], { warmSessions: true });
    const permissions = parsePermissionFlags(['--allow-run=sh'], workspace);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'plant', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');
    // The CLI stays for the next turn, and so do the empty stand-ins the sandbox denies the names with.
    expect(fs.statSync(path.join(workspace, '.bashrc')).size).toBe(0);
    const changes = payloads<{ changes: FileChange[] }>(harness.events(handle.conversationId), 'files_changed').flatMap((event) => event.changes);
    expect(changes.map((change) => `${change.change} ${change.path}`)).toEqual(['added notes.txt']);
    await harness.close();
    harness = undefined;
    for (const name of plant) expect(fs.existsSync(path.join(workspace, name)), name).toBe(false);
    expect(fs.readdirSync(workspace).sort()).toEqual(['notes.txt', 'plant.sh', 'sub']);
  });
});

/**
 * A workspace and a write grant with no start-up file at the top, each with a nested repository
 * (its hooks folder there in the workspace, not yet in the grant) and a nested .vscode/ with settings,
 * and the script that tries to plant them.
 */
function plantingFolders(): { workspace: string; grant: string; plant: string[] } {
  const workspace = fs.realpathSync(tempDir('ward-create-ws-'));
  const grant = fs.realpathSync(tempDir('ward-create-grant-'));
  expect(process.cwd()).not.toBe(workspace);
  for (const root of [workspace, grant]) {
    fs.mkdirSync(path.join(root, 'sub', '.git'), { recursive: true });
    fs.writeFileSync(path.join(root, 'sub', '.git', 'HEAD'), 'ref: refs/heads/main\n');
    fs.mkdirSync(path.join(root, 'sub', '.vscode'));
    fs.writeFileSync(path.join(root, 'sub', '.vscode', 'settings.json'), '{}\n');
  }
  fs.mkdirSync(path.join(workspace, 'sub', '.git', 'hooks'));
  const plant = ['.bashrc', '.mcp.json', '.gitconfig', '.vscode/tasks.json', 'sub/.git/hooks/pre-commit', 'sub/.vscode/tasks.json'];
  const lines = plant.map((name) => `  mkdir -p "$root/${path.dirname(name)}"; echo planted > "$root/${name}"`);
  fs.writeFileSync(path.join(workspace, 'plant.sh'), ['for root in "$@"; do', ...lines, '  echo fine > "$root/notes.txt"', 'done', ''].join('\n'));
  return { workspace, grant, plant };
}
