/**
 * S5: a stdio connection added with --sandbox runs in the same OS sandbox as runs (the real
 * @anthropic-ai/sandbox-runtime with bubblewrap), with its own profile: the system and its
 * program's folder read-only, its own folder read-write, nothing else; only its --sandbox-net
 * hosts, and no person to ask about any other. Driven through the built `ward` command: a real
 * `ward run` of the pinned CLI with a scripted model provider calls the server's tools.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolResultsSeen, type ModelProvider, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { site } from '../support/sites.js';
import { ward, type WardResult } from '../support/ward-cli.js';
import { bundledProbeServer, runnableHome } from './support.js';

interface Setup {
  readonly dir: string;
  readonly home: string;
  readonly instructions: string;
  readonly server: string;
  readonly provider: ModelProvider;
  ward(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<WardResult>;
}

/** A data folder with a scripted model provider and the bundled probe server. */
async function setup(): Promise<Setup> {
  const { dir, home, env, provider, instructions } = await runnableHome('ward-sandboxed-server-');
  return { dir, home, instructions, server: bundledProbeServer(dir), provider, ward: (args, extra = {}) => ward(args, { env: { ...env, ...extra }, timeoutMs: 90_000 }) };
}

function call(tool: string, input: Record<string, unknown>): ScriptStep {
  return { blocks: [{ type: 'tool_use', name: `mcp__ward__probe__${tool}`, input }] };
}

const PROBES = ['echo', 'read_file', 'write_file', 'fetch_url'];

/** Pins the probe server's tools into an agent and runs one turn whose model calls `steps` in order. */
async function runWithProbes(s: Setup, steps: readonly ScriptStep[], env: NodeJS.ProcessEnv = {}): Promise<WardResult> {
  const tools = await s.ward(['connections', 'tools', 'probe'], env);
  expect(tools.code, tools.stderr).toBe(0);
  const created = await s.ward(['agents', 'create', 'prober', '--instructions-file', s.instructions, ...PROBES.flatMap((tool) => ['--tool', `probe/${tool}`])], env);
  expect(created.code, created.stderr).toBe(0);
  s.provider.push(...steps, { blocks: [{ type: 'text', text: 'done' }] });
  return s.ward(['run', '--json', '--agent', 'prober', '--', 'probe'], env);
}

describe('a stdio connection in the sandbox (ward connections add --sandbox)', () => {
  it('test_s5_the_server_works_writes_its_folder_reads_nothing_outside_and_reaches_only_its_sandbox_net_hosts', async () => {
    const s = await setup();
    const folder = path.join(s.dir, 'server-data');
    fs.mkdirSync(folder);
    const outside = path.join(s.dir, 'private-notes.txt');
    fs.writeFileSync(outside, 'outside-canary-71c2');
    const allowed = await site('allowed');
    const other = await site('other');

    const added = await s.ward(['connections', 'add', 'probe', '--command', s.server, '--arg=--probes', '--sandbox', `--sandbox-net=${allowed.hostPort},docs.example.com`, `--sandbox-folder=${folder}`]);
    expect(added.code, added.stderr).toBe(0);
    const listed = await s.ward(['connections', 'list']);
    expect(listed.stdout).toContain(`  Runs in the sandbox: network only ${allowed.hostPort}, docs.example.com; files: ${folder} (read-write).\n`);
    expect(JSON.parse((await s.ward(['connections', 'list', '--json'])).stdout)).toMatchObject({ name: 'probe', sandbox: { net: [allowed.hostPort, 'docs.example.com'], folder } });

    const run = await runWithProbes(s, [
      call('echo', { text: 'pong-from-the-sandbox' }),
      call('write_file', { path: path.join(folder, 'note.txt'), text: 'kept' }),
      call('read_file', { path: outside }),
      call('read_file', { path: path.join(s.home, 'settings.json') }),
      call('fetch_url', { url: allowed.url }),
      call('fetch_url', { url: other.url }),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const [echo, write, readOutside, readWard, fetchAllowed, fetchOther] = toolResultsSeen(s.provider);
    expect(echo).toMatchObject({ text: expect.stringContaining('pong-from-the-sandbox'), isError: false });
    expect(write).toMatchObject({ text: expect.stringContaining('written'), isError: false });
    expect(fs.readFileSync(path.join(folder, 'note.txt'), 'utf8')).toBe('kept');
    // The temp home and Ward's data folder are not in the server's view: the files are simply not there.
    expect(readOutside).toMatchObject({ text: expect.stringContaining('ENOENT'), isError: true });
    expect(readWard).toMatchObject({ text: expect.stringContaining('ENOENT'), isError: true });
    expect(fetchAllowed).toMatchObject({ text: expect.stringContaining('200 OK hello from allowed'), isError: false });
    expect(fetchOther).toMatchObject({ text: expect.stringMatching(/403 .*--sandbox-net hosts: it has no person to ask/), isError: false });
    expect(allowed.hits()).toBe(1);
    expect(other.hits()).toBe(0);
    expect(run.stdout + run.stderr).not.toContain('outside-canary-71c2');
  });

  it('test_s5_with_runs_unsandboxed_the_server_still_is_and_its_refusal_says_no_one_is_asked', async () => {
    const s = await setup();
    const other = await site('other');
    // Started the way most servers are, by an interpreter: the script it names is readable, the folder around its folder is not.
    const neighbour = path.join(s.dir, 'neighbour.txt');
    fs.writeFileSync(neighbour, 'neighbour-canary-5e01');
    const added = await s.ward(['connections', 'add', 'probe', '--command', process.execPath, '--arg', s.server, '--arg=--probes', '--sandbox']);
    expect(added.code, added.stderr).toBe(0);
    expect((await s.ward(['connections', 'list'])).stdout).toContain('  Runs in the sandbox: network none; files: a private folder of its own (read-write).\n');

    const run = await runWithProbes(s, [call('write_file', { path: 'own.txt', text: 'private' }), call('read_file', { path: neighbour }), call('fetch_url', { url: other.url })], { WARD_SANDBOX: 'off' });
    expect(run.code, run.stderr).toBe(0);
    const [write, readOutside, fetchOther] = toolResultsSeen(s.provider);
    // Its own folder is its working folder, inside the namespace's data, which nothing else of Ward's data shows.
    expect(write).toMatchObject({ text: expect.stringContaining('written'), isError: false });
    const written = fs.readdirSync(path.join(s.home, 'namespaces'), { recursive: true, encoding: 'utf8' }).filter((entry) => entry.endsWith(path.join('connection-folders', 'probe', 'own.txt')));
    expect(written).toHaveLength(1);
    expect(readOutside).toMatchObject({ text: expect.stringContaining('ENOENT'), isError: true });
    expect(fetchOther).toMatchObject({ text: expect.stringMatching(/403 .*not in the --sandbox-net list of connection probe; a server has no person to ask/), isError: false });
    expect(other.hits()).toBe(0);

    // Removing the connection removes its private folder: a later namesake starts empty.
    expect((await s.ward(['connections', 'remove', 'probe'])).code).toBe(0);
    expect(fs.readdirSync(path.join(s.home, 'namespaces'), { recursive: true, encoding: 'utf8' }).some((entry) => entry.includes('connection-folders/probe'))).toBe(false);
  });

  it.each([
    ['run by an interpreter', (script: string) => ['--command', process.execPath, '--arg', script]],
    ['run as the program itself', (script: string) => ['--command', script]],
  ])('test_s5_a_server_whose_script_sits_in_the_home_folder_works_and_cannot_read_the_home_folder_%s', async (_how, command) => {
    const s = await setup();
    // runnableHome's HOME is s.dir, which also holds Ward's data folder.
    for (const [folder, file, text] of [['.ssh', 'id_rsa', 'ssh-canary-2f7a'], ['.aws', 'credentials', 'aws-canary-93d1']]) {
      fs.mkdirSync(path.join(s.dir, folder!));
      fs.writeFileSync(path.join(s.dir, folder!, file!), text!);
    }
    const script = path.join(s.dir, 'server.mjs');
    fs.copyFileSync(s.server, script);
    fs.chmodSync(script, 0o755);
    const added = await s.ward(['connections', 'add', 'probe', ...command(script), '--arg=--probes', '--sandbox']);
    expect(added.code, added.stderr).toBe(0);

    const run = await runWithProbes(s, [call('echo', { text: 'pong-from-home' }), call('read_file', { path: path.join(s.dir, '.ssh', 'id_rsa') }), call('read_file', { path: path.join(s.dir, '.aws', 'credentials') })]);
    expect(run.code, run.stderr).toBe(0);
    const [echo, ssh, aws] = toolResultsSeen(s.provider);
    expect(echo).toMatchObject({ text: expect.stringContaining('pong-from-home'), isError: false });
    expect(ssh).toMatchObject({ text: expect.stringContaining('ENOENT'), isError: true });
    expect(aws).toMatchObject({ text: expect.stringContaining('ENOENT'), isError: true });
    expect(JSON.stringify(s.provider.requests.map((request) => request.rawBody))).not.toMatch(/ssh-canary-2f7a|aws-canary-93d1/);
  });

  it('test_s5_a_server_in_wards_data_folder_or_a_sandbox_folder_holding_the_home_folder_is_refused_saying_why', async () => {
    const s = await setup();
    const inData = path.join(s.home, 'server.mjs');
    fs.copyFileSync(s.server, inData);
    fs.chmodSync(inData, 0o755);
    expect((await s.ward(['connections', 'add', 'probe', '--command', process.execPath, '--arg', inData, '--sandbox'])).code).toBe(0);
    const refused = await s.ward(['connections', 'tools', 'probe']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`connection probe was not started: ${inData} is inside Ward's data folder (${fs.realpathSync(s.home)}), which no sandboxed program may see; move the program out of it`);

    // A home folder apart from Ward's data: a server's own folder may be neither it nor a folder above it.
    const people = path.join(s.dir, 'people');
    const userHome = path.join(people, 'alice');
    fs.mkdirSync(userHome, { recursive: true });
    for (const folder of [userHome, people]) {
      const added = await s.ward(['connections', 'add', 'other', '--command', s.server, '--sandbox', `--sandbox-folder=${folder}`], { HOME: userHome });
      expect(added).toMatchObject({ code: 2, stderr: expect.stringContaining(`connection sandbox.folder: ${JSON.stringify(folder)} is or holds the home folder (${userHome}); give the server a folder of its own inside it`) });
    }
  });

  it('test_s5_a_sandboxed_server_is_not_started_where_there_is_no_sandbox_naming_what_is_missing', async () => {
    const s = await setup();
    expect((await s.ward(['connections', 'add', 'probe', '--command', s.server, '--sandbox'])).code).toBe(0);
    // No bubblewrap, socat or ripgrep on this PATH: the runtime's dependency check fails.
    const refused = await s.ward(['connections', 'tools', 'probe'], { PATH: path.join(s.dir, 'empty-bin') });
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(/connection probe asked for the sandbox \(--sandbox\) and .*bwrap.*apt-get install bubblewrap socat ripgrep.*the server was not started/);
    expect((await s.ward(['connections', 'list'])).stdout).toMatch(/^probe {2}stdio {2}.* {2}error \(unreachable\) {2}tools 0\/0 on$/m);
  });

  it('test_s5_bad_sandbox_settings_are_refused_naming_the_field_with_the_usage_exit_code', async () => {
    const s = await setup();
    const add = (...flags: string[]) => s.ward(['connections', 'add', 'probe', '--command', s.server, ...flags]);
    expect(await add('--sandbox', '--sandbox-folder=server-data')).toMatchObject({ code: 2, stderr: expect.stringContaining('connection sandbox.folder: "server-data" must be an absolute path') });
    expect(await add('--sandbox', `--sandbox-folder=${path.join(s.home, 'namespaces')}`)).toMatchObject({ code: 2, stderr: expect.stringMatching(/connection sandbox\.folder: .* is or holds Ward's data folder/) });
    expect(await add('--sandbox', `--sandbox-folder=${s.dir}`)).toMatchObject({ code: 2, stderr: expect.stringMatching(/connection sandbox\.folder: .* is or holds Ward's data folder/) });
    expect(await add('--sandbox', `--sandbox-folder=${path.join(s.dir, 'missing')}`)).toMatchObject({ code: 2, stderr: expect.stringMatching(/connection sandbox\.folder: .*missing" does not exist/) });
    expect(await add('--sandbox', '--sandbox-net=https://docs.example.com')).toMatchObject({ code: 2, stderr: expect.stringContaining('connection sandbox.net[0]: "https://docs.example.com": give a host, not a URL (no scheme)') });
    expect(await add('--sandbox', '--sandbox-net=docs.example.com,*')).toMatchObject({ code: 2, stderr: expect.stringContaining('connection sandbox.net[1]: "*": a host is required (Ward has no allow-all)') });
    expect(await add('--sandbox', '--sandbox-net=vm:8080')).toMatchObject({ code: 2, stderr: expect.stringContaining('connection sandbox.net[0]: "vm:8080": the sandbox\'s proxy takes a host name only with a dot in it') });
    expect(await add('--sandbox', '--sandbox-net=example.com:99999')).toMatchObject({ code: 2, stderr: expect.stringContaining('port 99999 is outside 1-65535') });
    expect(await add('--sandbox-net=docs.example.com')).toMatchObject({ code: 2, stderr: expect.stringContaining('--sandbox-net and --sandbox-folder need --sandbox') });
    expect(await s.ward(['connections', 'add', 'remote', '--url', 'https://mcp.example.com/mcp', '--sandbox'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--sandbox is for --command connections') });
    expect(await s.ward(['connections', 'list'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no connections in this namespace yet/) });
  });
});
