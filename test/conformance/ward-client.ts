/**
 * Ward as the client under test of the official MCP conformance suite. The suite starts a server
 * for one scenario and runs `node --import tsx test/conformance/ward-client.ts SERVER_URL` with
 * MCP_CONFORMANCE_SCENARIO (and, for some, MCP_CONFORMANCE_CONTEXT) set. This does what a person
 * would, with the built `ward` command only: add the server as a connection (with the client id
 * the scenario hands out, if any), sign in when the server asks for it (playing the browser),
 * list and pin its tools, and call one through a real `ward run` (the pinned CLI in the sandbox,
 * the scripted model provider asking for the call). Answers to a server's request for input are
 * typed at the terminal (`script` gives the run a pty). When Ward says the connection needs more
 * access, it signs in again, twice at most, as a person would.
 *
 * Exit status 0 when the tool call went through (or there was no tool to call).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startModelProvider, toolResultsIn } from '../fixtures/model-provider/provider.js';
import { followToCallback } from '../fixtures/oidc/provider.js';
import { onTerminal } from '../support/pty.js';
import { REPO_ROOT, WARD_BIN } from '../support/ward-cli.js';

const CONNECTION = 'my-conf';
const AGENT = 'conformance';
/** Ward's Client ID Metadata Document as an admin would configure it; the suite's CIMD scenario expects this one. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const MAX_SIGN_INS = 3;
const STEP_TIMEOUT_MS = 60_000;

/**
 * What to ask the model to call, per scenario; the auth scenarios' servers all offer test-tool.
 * `echoSchemaOf`: the call's `schema` argument is that tool's input schema as the model was shown
 * it (through Ward's pin, the broker and the CLI), which the scenario compares with its own.
 */
const CALLS: Record<string, { tool: string; input: Record<string, unknown>; echoSchemaOf?: string }> = {
  tools_call: { tool: 'add_numbers', input: { a: 5, b: 3 } },
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', input: {} },
  'sse-retry': { tool: 'test_reconnection', input: {} },
  'json-schema-2020-12-preservation': { tool: 'json_schema_echo', input: {}, echoSchemaOf: 'json_schema_2020_12_tool' },
};

interface Call {
  readonly tool: string;
  readonly input: Record<string, unknown>;
}

/**
 * Scenarios that need several calls, one after the other in one run (the scenario's context may
 * name them instead, as `toolCalls`): the 2026-07-28 header scenarios and SEP-2322's request state.
 */
const SEVERAL_CALLS: Record<string, readonly Call[]> = {
  'http-standard-headers': [
    { tool: 'test_headers', input: {} },
    { tool: 'my-hyphenated-tool', input: {} },
  ],
  'http-invalid-tool-headers': [{ tool: 'valid_tool', input: { region: 'us-west1' } }],
  'sep-2322-client-request-state': ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated', 'test_mrtr_no_result_type'].map((tool) => ({ tool, input: {} })),
};

/** What the person types at each request for input, per scenario, and how many requests come. */
const ANSWERS: Record<string, { readonly typed: string; readonly times: number }> = {
  // "yes" to the one confirmation field, then accept; two of the calls ask.
  'sep-2322-client-request-state': { typed: 'y\ra\r', times: 2 },
};

/** Scenarios whose server answers tools/list and nothing else (no tools/call): pinning its tools is the whole task. */
const LIST_ONLY = new Set(['json-schema-ref-no-deref']);

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const serverUrl = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
if (serverUrl === undefined) {
  console.error('usage: ward-client.ts SERVER_URL');
  process.exit(2);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-conformance-'));
const home = path.join(root, 'home');
fs.mkdirSync(home);
fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file', clientMetadataUrl: CLIENT_METADATA_URL }));
const provider = await startModelProvider();
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: root,
  TMPDIR: root,
  WARD_HOME: home,
  ANTHROPIC_API_KEY: 'sk-ant-conformance-not-a-key',
  WARD_MODEL_BASE_URL: provider.url,
  TERM: 'dumb',
};

function log(line: string): void {
  process.stderr.write(`ward-client: ${line}\n`);
}

/** Runs `ward ARGS`; `onStderr` sees what it has written to stderr so far. */
function ward(args: readonly string[], options: { input?: string; onStderr?: (text: string) => void } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WARD_BIN, ...args], { env, cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStderr?.(stderr);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(logged(args, { code, stdout, stderr }));
    });
    child.stdin.end(options.input ?? '');
  });
}

/** `ward ARGS` on a terminal, typing `typed` once `when` shows (a person answering a question). */
async function wardOnTerminal(args: readonly string[], when: string, typed: string, times: number): Promise<Result> {
  const { code, screen } = await onTerminal([process.execPath, WARD_BIN, ...args], { env, cwd: REPO_ROOT, when, typed, times, timeoutMs: STEP_TIMEOUT_MS });
  return logged(args, { code, stdout: screen, stderr: '' });
}

function logged(args: readonly string[], result: Result): Result {
  log(`ward ${args.slice(0, 2).join(' ')} → ${result.code}${result.code === 0 ? '' : `\n${(result.stdout + result.stderr).trim().slice(-1500)}`}`);
  return result;
}

/** `ward connections login`, playing the person's browser at the address it prints. */
async function signIn(): Promise<boolean> {
  let played = false;
  const result = await ward(['connections', 'login', CONNECTION, '--no-browser', '--timeout', '30'], {
    onStderr: (text) => {
      const match = /(https?:\/\/\S+)\s*$/m.exec(text);
      if (match === null || played) return;
      played = true;
      followToCallback(new URL(match[1]!))
        .then((callback) => fetch(callback, { signal: AbortSignal.timeout(10_000) }))
        .then((response) => response.arrayBuffer())
        .catch((error: unknown) => log(`the browser failed: ${String(error)}`));
    },
  });
  return result.code === 0;
}

/** Whether Ward says the connection needs (more) sign-in: the person's cue to sign in again. */
async function needsSignIn(): Promise<boolean> {
  const listed = await ward(['connections', 'list', '--json']);
  const view = JSON.parse(listed.stdout.trim().split('\n')[0] ?? '{}') as { health?: string };
  return view.health === 'not_signed_in';
}

/** The input schema of `tool` as the CLI shows it to the model, from one `ward run` that calls nothing. */
async function schemaShownToModel(tool: string): Promise<unknown> {
  provider.push({ blocks: [{ type: 'text', text: 'ok' }] });
  await ward(['run', '--json', '--agent', AGENT, '--', 'list your tools']);
  const offered = provider.conversationRequests().at(-1)?.body?.tools ?? [];
  const shown = offered.find((candidate) => candidate.name === `mcp__ward__${CONNECTION}__${tool}`) as { input_schema?: unknown } | undefined;
  if (shown?.input_schema === undefined) log(`the model was not shown ${tool} (it was shown: ${offered.map((candidate) => candidate.name).join(', ')})`);
  return shown?.input_schema ?? {};
}

async function main(): Promise<number> {
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as { client_id?: string; client_secret?: string; toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
  const client = context.client_id === undefined ? [] : ['--client-id', context.client_id, ...(context.client_secret === undefined ? [] : ['--client-secret-stdin'])];
  const added = await ward(['connections', 'add', CONNECTION, '--url', serverUrl!, ...client], { input: context.client_secret === undefined ? '' : `${context.client_secret}\n` });
  if (added.code !== 0) return 1;

  let signIns = 0;
  let listed = await ward(['connections', 'tools', CONNECTION, '--json']);
  while (listed.code !== 0 && signIns < MAX_SIGN_INS && (await needsSignIn())) {
    signIns += 1;
    if (!(await signIn())) return 1;
    listed = await ward(['connections', 'tools', CONNECTION, '--json']);
  }
  if (listed.code !== 0) return 1;
  const tools = (JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
  if (LIST_ONLY.has(scenario)) return tools.length > 0 ? 0 : 1;
  const single = CALLS[scenario] ?? { tool: 'test-tool', input: {} };
  const calls: readonly Call[] = context.toolCalls?.map((call) => ({ tool: call.name, input: call.arguments })) ?? SEVERAL_CALLS[scenario] ?? [single];
  const missing = calls.filter((call) => !tools.includes(call.tool));
  if (missing.length > 0) {
    log(`the server offers no ${missing.map((call) => call.tool).join(', ')} (it offers: ${tools.join(', ') || 'nothing'}); nothing to call`);
    return tools.length === 0 ? 0 : 1;
  }
  const instructions = path.join(root, 'instructions.md');
  fs.writeFileSync(instructions, 'Call the tool you are asked to call.');
  const pinned = [...new Set([...calls.map((call) => call.tool), ...(single.echoSchemaOf === undefined ? [] : [single.echoSchemaOf])])].flatMap((tool) => ['--tool', `${CONNECTION}/${tool}`]);
  if ((await ward(['agents', 'create', AGENT, '--instructions-file', instructions, ...pinned])).code !== 0) return 1;
  const echoed = single.echoSchemaOf === undefined ? undefined : { schema: await schemaShownToModel(single.echoSchemaOf) };

  for (;;) {
    const turns = calls.map((call) => ({ blocks: [{ type: 'tool_use' as const, name: `mcp__ward__${CONNECTION}__${call.tool}`, input: echoed ?? call.input }] }));
    provider.push(...turns, { blocks: [{ type: 'text', text: 'done' }] });
    const args = ['run', '--json', '--agent', AGENT, '--', `call ${calls.map((call) => call.tool).join(', ')}`];
    // The elicitation scenarios: Enter on every field (their defaults), then accept.
    const answers = ANSWERS[scenario] ?? (scenario.startsWith('elicitation') ? { typed: `${'\r'.repeat(5)}a\r`, times: 1 } : undefined);
    const run = answers === undefined ? await ward(args) : await wardOnTerminal(args, 'asks for input:', answers.typed, answers.times);
    const results = provider.conversationRequests().flatMap(toolResultsIn).slice(-calls.length);
    log(`the model got: ${JSON.stringify(results.map((result) => result.content)).slice(0, 600)}`);
    if (run.code === 0 && results.length === calls.length && results.every((result) => result.is_error !== true)) return 0;
    if (signIns >= MAX_SIGN_INS || !(await needsSignIn())) return 1;
    signIns += 1;
    if (!(await signIn())) return 1;
  }
}

let status = 1;
try {
  status = await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await provider.close();
  fs.rmSync(root, { recursive: true, force: true });
}
process.exit(status);
