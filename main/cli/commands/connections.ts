import type { Readable } from 'node:stream';
import { sandboxText, type ConnectionView, type ToolChange, type ToolPin } from '../../app/connections.js';
import { openSystemBrowser } from '../../app/browser.js';
import { EXIT, WardError } from '../../base/errors.js';
import { absolutePaths } from '../../base/process.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command, type CommandContext } from '../command.js';
import { escapeForDisplay } from '../../../common/display.js';
import { readBoundedStdin, writeJson, writeLine } from '../io.js';
import { wardCommand, type Namespace } from '../../app/namespaces.js';

const MAX_STDIN_BYTES = 256 * 1024;
const STDIN_TIMEOUT_MS = 5 * 60_000;

/** Secret values arrive on stdin, one line per --secret-env name, in order: never in argv (C3). */
async function readSecretLines(stream: Readable, names: readonly string[]): Promise<Record<string, string>> {
  const text = await readBoundedStdin(stream, { what: 'the secret values', maxBytes: MAX_STDIN_BYTES, timeoutMs: STDIN_TIMEOUT_MS });
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  if (lines.length !== names.length || lines.some((line) => line === '')) {
    throw new WardError('usage', `expected ${names.length} non-empty line(s) on stdin, one value for each --secret-env (${names.join(', ')}), got ${lines.length}`);
  }
  return Object.fromEntries(names.map((name, index) => [name, lines[index]!]));
}

/** A pre-registered client's secret: one line on stdin, never argv (C3). */
async function readClientSecret(stream: Readable): Promise<string> {
  const text = await readBoundedStdin(stream, { what: 'the client secret', maxBytes: MAX_STDIN_BYTES, timeoutMs: STDIN_TIMEOUT_MS });
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  if (lines.length !== 1 || lines[0] === '') throw new WardError('usage', `expected the client secret as one non-empty line on stdin, got ${lines.length} line(s)`);
  return lines[0]!;
}

function target(view: ConnectionView): string {
  return view.spec.transport === 'stdio' ? [view.spec.command, ...view.spec.args].map((part) => escapeForDisplay(part, 120)).join(' ') : view.spec.url;
}

function healthText(view: ConnectionView, ns: Namespace): string {
  if (view.health === 'not_signed_in' && view.lastErrorCode === 'insufficient_scope') {
    return `needs more access: sign in again with ${wardCommand(ns, `connections login ${view.spec.name}`)} to grant ${view.wantedScope ?? 'what it asks for'}`;
  }
  if (view.health === 'not_signed_in') return `not signed in: sign in again with ${wardCommand(ns, `connections login ${view.spec.name}`)}`;
  if (view.health === 'error') return `error (${view.lastErrorCode ?? 'unknown'})`;
  return view.health;
}

function toolJson(pin: ToolPin): Record<string, unknown> {
  return { name: pin.name, exposedName: `${pin.connection}__${pin.name}`, enabled: pin.enabled, status: pin.status, reason: pin.reason, schemaHash: pin.schemaHash, description: pin.description };
}

function viewJson(view: ConnectionView): Record<string, unknown> {
  const { spec } = view;
  return {
    name: spec.name,
    transport: spec.transport,
    ...(spec.transport === 'stdio'
      ? { command: spec.command, args: spec.args, secretEnv: spec.secretEnv, sandbox: spec.sandbox }
      : { url: spec.url, allowInsecureHttp: spec.allowInsecureHttp, clientId: spec.clientId, scope: view.scope, wantedScope: view.wantedScope }),
    health: view.health,
    lastErrorCode: view.lastErrorCode,
    checkedAt: view.checkedAt,
    tools: view.tools.map(toolJson),
  };
}

function toolLine(pin: ToolPin): string {
  const state = pin.status !== 'pinned' ? `disabled: ${pin.reason ?? pin.status}` : pin.enabled ? 'on' : 'off';
  return `  ${escapeForDisplay(`${pin.connection}__${pin.name}`, 80)}  ${state}  ${escapeForDisplay(pin.description.split('\n')[0] ?? '', 100)}`;
}

const STDERR_TAIL_LINES = 20;

/** The last lines a failed stdio server wrote to stderr, escaped: often the only clue to why it failed. */
function writeStderrTail(stream: NodeJS.WritableStream, text: string): void {
  const lines = text.split('\n').filter((line) => line.trim() !== '').slice(-STDERR_TAIL_LINES);
  if (lines.length === 0) return;
  stream.write(`the server's stderr (last ${lines.length} line(s)):\n`);
  for (const line of lines) stream.write(`  ${escapeForDisplay(line, 300)}\n`);
}

const OPTIONS = {
  command: { type: 'string' },
  arg: { type: 'string', multiple: true },
  'secret-env': { type: 'string', multiple: true },
  sandbox: { type: 'boolean', default: false },
  'sandbox-net': { type: 'string', multiple: true },
  'sandbox-folder': { type: 'string' },
  url: { type: 'string' },
  'allow-insecure-http': { type: 'boolean', default: false },
  'client-id': { type: 'string' },
  'client-secret-stdin': { type: 'boolean', default: false },
  'no-browser': { type: 'boolean', default: false },
  timeout: { type: 'string' },
  enable: { type: 'string' },
  disable: { type: 'string' },
  repin: { type: 'string' },
  namespace: COMMON_OPTIONS.namespace,
  json: COMMON_OPTIONS.json,
} as const;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

export const connectionsCommand: Command = {
  name: 'connections',
  usage:
    'ward connections add NAME (--command CMD [--arg A ...] [--secret-env VAR ...] [--sandbox [--sandbox-net=HOST,...] [--sandbox-folder=DIR]] | --url URL [--allow-insecure-http] [--client-id ID [--client-secret-stdin]]) | ' +
    'ward connections list | ward connections remove NAME | ward connections login NAME [--no-browser] [--timeout SECONDS] | ' +
    'ward connections tools NAME [--enable TOOL | --disable TOOL | --repin TOOL]   (all take [--namespace NS] [--json]; secret values for --secret-env, or a pre-registered client\'s secret, are read from stdin, one line each; an argument starting with "-" is written --arg=-x)',
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(this, args, OPTIONS);
    const { io } = context;
    const action = requirePositional(this, positionals, 0, 'an action (add, list, remove, login or tools)');
    const name = (): string => requirePositional(this, positionals, 1, 'a connection name');
    if (positionals.length > (action === 'list' ? 1 : 2)) throw new WardError('usage', `too many arguments\nusage: ${this.usage}`);

    if (action === 'add') return addConnection(values, name, context, this.usage);
    if (action === 'list') return listConnections(values, context);
    if (action === 'remove') {
      const app = context.app();
      await (await app.connections()).remove(app.namespaces.fromFlag(values.namespace), name());
      if (values.json) writeJson(io.stdout, { removed: name() });
      else writeLine(io.stdout, `removed connection ${name()} and its stored credentials`);
      return EXIT.ok;
    }
    if (action === 'login') return signInToConnection(values, name(), context);
    if (action === 'tools') return listOrChangeTools(values, name(), context, this.usage);
    throw new WardError('usage', `unknown action ${JSON.stringify(action)}\nusage: ${this.usage}`);
  },
};

/** `add`: the connection from the flags, its secret values (and a client's secret) read from stdin. */
async function addConnection(values: Values, name: () => string, context: CommandContext, usage: string): Promise<number> {
  const { io } = context;
  if ((values.command === undefined) === (values.url === undefined)) throw new WardError('usage', `give exactly one of --command or --url\nusage: ${usage}`);
  const secretEnv = values['secret-env'] ?? [];
  const sandboxNet = (values['sandbox-net'] ?? []).flatMap((list) => list.split(','));
  if (!values.sandbox && (sandboxNet.length > 0 || values['sandbox-folder'] !== undefined)) throw new WardError('usage', '--sandbox-net and --sandbox-folder need --sandbox');
  if (values.url !== undefined && values.sandbox) throw new WardError('usage', '--sandbox is for --command connections (a remote server runs elsewhere)');
  const sandbox = values.sandbox ? { net: sandboxNet, folder: values['sandbox-folder'] ?? null } : null;
  const input =
    values.command !== undefined
      ? // Relative paths are where the person typed them, not where Ward later starts the server.
        { transport: 'stdio', name: name(), ...absolutePaths(values.command, values.arg ?? [], process.cwd()), secretEnv, sandbox }
      : { transport: 'http', name: name(), url: values.url, allowInsecureHttp: values['allow-insecure-http'], clientId: values['client-id'] };
  if (values.url !== undefined && (values.arg !== undefined || secretEnv.length > 0)) throw new WardError('usage', '--arg and --secret-env are for --command connections');
  if (values.command !== undefined && values['client-id'] !== undefined) throw new WardError('usage', '--client-id is for --url connections');
  if (values['client-secret-stdin'] && values['client-id'] === undefined) throw new WardError('usage', '--client-secret-stdin needs --client-id');
  const app = context.app();
  const store = app.namespaces.fromFlag(values.namespace);
  const secrets = secretEnv.length > 0 ? await readSecretLines(io.stdin, secretEnv) : {};
  const clientSecret = values['client-secret-stdin'] ? await readClientSecret(io.stdin) : undefined;
  const view = await (await app.connections()).add(store, input, secrets, clientSecret);
  if (values.json) writeJson(io.stdout, viewJson(view));
  else {
    writeLine(io.stdout, `added connection ${view.spec.name}`);
    writeLine(io.stdout, view.spec.transport === 'http' ? `next: "ward connections login ${view.spec.name}" if the server needs sign-in, then "ward connections tools ${view.spec.name}"` : `next: "ward connections tools ${view.spec.name}" to start it and list its tools`);
  }
  return EXIT.ok;

}

async function listConnections(values: Values, context: CommandContext): Promise<number> {
  const { io } = context;
  const app = context.app();
  const store = app.namespaces.fromFlag(values.namespace);
  const views = await (await app.connections()).list(store);
  if (views.length === 0 && !values.json) writeLine(io.stdout, 'no connections in this namespace yet; add one with "ward connections add NAME --command CMD" or "--url URL"');
  for (const view of views) {
    if (values.json) {
      writeJson(io.stdout, viewJson(view));
      continue;
    }
    const enabled = view.tools.filter((pin) => pin.enabled && pin.status === 'pinned').length;
    writeLine(io.stdout, `${view.spec.name}  ${view.spec.transport}  ${target(view)}  ${healthText(view, store.namespace)}  tools ${enabled}/${view.tools.length} on`);
    const sandbox = sandboxText(view.spec);
    if (sandbox !== null) writeLine(io.stdout, `  ${escapeForDisplay(sandbox, 400)}`);
    for (const pin of view.tools) writeLine(io.stdout, toolLine(pin));
  }
  return EXIT.ok;

}

/** `login`: signs in through the browser (or prints the address with --no-browser), bounded by --timeout. */
async function signInToConnection(values: Values, name: string, context: CommandContext): Promise<number> {
  const { io } = context;
  let timeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) throw new WardError('usage', '--timeout must be a whole number of seconds from 1 to 3600');
    timeoutMs = seconds * 1000;
  }
  const app = context.app();
  await (await app.connections()).signIn(app.namespaces.fromFlag(values.namespace), name, {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    openBrowser: async (url) => {
      writeLine(io.stderr, `${values['no-browser'] ? 'Open this address in a browser to sign in' : 'Opening the browser to sign in; if it does not open, visit'}:\n${url.href}`);
      if (!values['no-browser']) await openSystemBrowser(url).catch(() => undefined);
    },
  });
  if (values.json) writeJson(io.stdout, { connection: name, signedIn: true });
  else writeLine(io.stdout, `signed in to connection ${name}`);
  return EXIT.ok;

}

/** `tools`: starts the connection, lists its tools (pinning new ones) and applies at most one change. */
async function listOrChangeTools(values: Values, name: string, context: CommandContext, usage: string): Promise<number> {
  const { io } = context;
  const changes = [values.enable, values.disable, values.repin].filter((value) => value !== undefined);
  if (changes.length > 1) throw new WardError('usage', `give at most one of --enable, --disable or --repin\nusage: ${usage}`);
  const change: ToolChange | null =
    values.enable !== undefined ? { action: 'enable', tool: values.enable } : values.disable !== undefined ? { action: 'disable', tool: values.disable } : values.repin !== undefined ? { action: 'repin', tool: values.repin } : null;
  const app = context.app();
  const { view, unusable } = await (await app.connections()).tools(app.namespaces.fromFlag(values.namespace), name, change, (stderr) => writeStderrTail(io.stderr, stderr));
  for (const item of unusable) writeLine(io.stderr, `not offered: ${escapeForDisplay(item.name, 80)}: ${escapeForDisplay(item.reason)}`);
  if (values.json) writeJson(io.stdout, viewJson(view));
  else for (const pin of view.tools) writeLine(io.stdout, toolLine(pin));
  return EXIT.ok;

}
