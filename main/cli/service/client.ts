/**
 * `ward run` through the background service (issue 29): connect (starting the service on first
 * use), prove who we are, hand over the arguments and folder, and be the service's terminal:
 * print what it writes, forward Ctrl-C, TERM and HUP, send stdin when it asks for the prompt, and
 * ask the person the turn's questions here. Loads none of Ward's run code: that is the point.
 *
 * Returns null when the service cannot take the turn (turned off, another build, another
 * environment, it would not start): the caller then runs it in this process, as before.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { resolveWardHome } from '../../base/home.js';
import { describeError, EXIT, WardError } from '../../base/errors.js';
import { serviceIdleMs } from '../../app/run-limits.js';
import type { TurnPrompter } from '../../app/terminal-questions.js';
import { processIo, type CliIo } from '../io.js';
import { buildIdentity, environmentDigest, offByPolicy, privateFolder, readToken, servicePlace, type ServicePlace } from './place.js';
import { LineChannel, type ClientMessage, type ServerMessage } from './wire.js';

type Channel = LineChannel<ServerMessage, ClientMessage>;

/** How long a service just started has to listen. */
const START_WAIT_MS = 10_000;
const START_POLL_MS = 20;
/** How long a service has to answer a hello. */
const WELCOME_MS = 10_000;

const NOT_RUNNING = 'the background service is not running';
const NO_SESSION = 'there is no login session runtime folder (XDG_RUNTIME_DIR) for it';

/** Whether `ward run` should go through the service: `WARD_SERVICE` (on|off, default on), a login session (./place.ts) and `serviceIdleMinutes` (0: off). */
function serviceWanted(env: NodeJS.ProcessEnv): boolean {
  const setting = env.WARD_SERVICE;
  if (setting !== undefined && setting !== 'on' && setting !== 'off') throw new WardError('usage', `WARD_SERVICE is "on" or "off", not ${JSON.stringify(setting.slice(0, 20))}`);
  if (setting === 'off') return false;
  try {
    const home = resolveWardHome(env);
    return servicePlace(env, home) !== null && serviceIdleMs(home) > 0;
  } catch {
    return false; // a malformed settings.json: the turn in this process reports it
  }
}

function connect(socket: string): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const connection = net.createConnection(socket);
    connection.once('connect', () => resolve(connection));
    connection.once('error', () => resolve(null));
  });
}

/**
 * Starts the service, detached from this terminal (its own session: a closed terminal does not end
 * it), and connects. It is Ward itself, so it gets this `ward run`'s whole environment, as an
 * in-process turn has it; the CLIs it starts still get only their allowlist (R2).
 */
async function startAndConnect(place: ServicePlace, env: NodeJS.ProcessEnv, io: CliIo): Promise<net.Socket | null> {
  const program = process.argv[1];
  if (program === undefined) return null;
  const child = spawn(process.execPath, [program, 'service', 'run'], { detached: true, stdio: 'ignore', env });
  child.unref();
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
    const socket = await connect(place.socket);
    if (socket !== null) {
      io.stderr.write('ward: started the background service (it keeps Ward and a CLI ready; "ward service stop" ends it)\n');
      return socket;
    }
  }
  return null;
}

/** Connects and greets; the channel once welcomed, else why not. */
export async function openService(env: NodeJS.ProcessEnv, io: CliIo, start: boolean): Promise<Channel | string> {
  const place = servicePlace(env, resolveWardHome(env));
  if (place === null) return NO_SESSION;
  if (!start && !fs.existsSync(place.dir)) return NOT_RUNNING;
  privateFolder(place, start);
  const refusal = offByPolicy(place);
  if (start && refusal !== null) return refusal;
  const socket = (await connect(place.socket)) ?? (start ? await startAndConnect(place, env, io) : null);
  if (socket === null) return start ? 'the background service did not start' : NOT_RUNNING;
  const token = readToken(place);
  if (token === undefined) {
    socket.destroy();
    return 'the background service left no token to prove who you are';
  }
  const channel: Channel = new LineChannel(socket);
  socket.on('error', () => socket.destroy());
  const answer = await new Promise<ServerMessage | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), WELCOME_MS);
    channel.onMessage((message) => {
      clearTimeout(timer);
      resolve(message);
    });
    socket.once('close', () => resolve(null));
    channel.send({ t: 'hello', token, build: buildIdentity(), env: environmentDigest(env) });
  });
  if (answer?.t === 'welcome') return channel;
  socket.destroy();
  return answer?.t === 'refused' ? answer.why : 'the background service did not answer';
}

/** Sends one request and waits for the service's one answer (null: it closed first). */
export function request(channel: Channel, message: Extract<ClientMessage, { t: 'status' | 'stop' }>): Promise<ServerMessage | null> {
  return new Promise((resolve) => {
    let reply: ServerMessage | null = null;
    channel.onMessage((answer) => (reply ??= answer));
    channel.socket.once('close', () => resolve(reply));
    channel.send(message);
  });
}

/** How long `ward service stop` waits for the service to stop its turns and exit. */
const STOP_WAIT_MS = 30_000;

/** Waits until the service removed its socket, its last act before it exits; false if it has not after STOP_WAIT_MS. */
export async function waitUntilGone(env: NodeJS.ProcessEnv): Promise<boolean> {
  const place = servicePlace(env, resolveWardHome(env));
  if (place === null) return true;
  for (const deadline = Date.now() + STOP_WAIT_MS; Date.now() < deadline; ) {
    if (!fs.existsSync(place.socket)) return true;
    await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
  }
  return false;
}

/** Runs `ward run ARGS` in the service; its exit code, or null to run it in this process. */
export async function runThroughService(args: readonly string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  const io = processIo();
  try {
    if (!serviceWanted(env)) return null;
  } catch (error) {
    io.stderr.write(`ward run: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  let opened: Channel | string;
  try {
    opened = await openService(env, io, true);
  } catch (error) {
    opened = describeError(error);
  }
  if (typeof opened === 'string') {
    io.stderr.write(`ward: running this turn in this process: ${opened}\n`);
    return null;
  }
  return beTerminal(opened, args, io);
}

/** Be the terminal of the turn the service runs, until it sends the exit code. */
function beTerminal(channel: Channel, args: readonly string[], io: CliIo): Promise<number> {
  const forward = (name: 'SIGINT' | 'SIGTERM' | 'SIGHUP') => channel.send({ t: 'signal', name });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const name of signals) process.on(name, forward);
  const questions = new Map<number, AbortController>();
  // One prompter for the whole turn: it owns this terminal's input while it asks.
  let prompter: Promise<TurnPrompter> | undefined;
  const person = () => (prompter ??= import('../../app/terminal-questions.js').then(({ terminalPrompter }) => terminalPrompter(process.stdin, process.stderr)));
  return new Promise<number>((resolve) => {
    let code: number | undefined;
    channel.onMessage((message) => {
      if (message.t === 'out') (message.fd === 1 ? io.stdout : io.stderr).write(message.data);
      else if (message.t === 'read_stdin') sendStdin(channel);
      else if (message.t === 'ask') void answer(channel, message, questions, person);
      else if (message.t === 'cancel') questions.get(message.id)?.abort();
      else if (message.t === 'exit') code = message.code;
    });
    channel.socket.once('close', () => {
      for (const name of signals) process.off(name, forward);
      for (const question of questions.values()) question.abort();
      if (code === undefined) io.stderr.write('ward: the background service ended before the turn did; "ward conversations" shows how the run was recorded\n');
      resolve(code ?? EXIT.uncertain);
    });
    channel.send({ t: 'run', args, cwd: process.cwd(), tty: { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true, stderr: process.stderr.isTTY === true } });
  });
}

function sendStdin(channel: Channel): void {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (data: string) => channel.send({ t: 'stdin', data }));
  process.stdin.once('end', () => channel.send({ t: 'stdin_end' }));
}

/** Asks the person at this terminal, as an in-process turn would (the terminal prompter loads only now). */
async function answer(channel: Channel, message: Extract<ServerMessage, { t: 'ask' }>, questions: Map<number, AbortController>, person: () => Promise<TurnPrompter>): Promise<void> {
  const abort = new AbortController();
  questions.set(message.id, abort);
  try {
    const prompter = await person();
    // The question is shown escaped by the prompter, as any text from the model is (D1).
    const question = message.question as never;
    const reply = message.kind === 'permission' ? await prompter.ask(question, abort.signal) : await (prompter.elicit?.(question, abort.signal) ?? { action: 'decline' });
    channel.send({ t: 'answer', id: message.id, answer: reply });
  } catch {
    channel.send({ t: 'answer', id: message.id, answer: null });
  } finally {
    questions.delete(message.id);
  }
}
