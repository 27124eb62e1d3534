/**
 * A client's `ward run` as the service runs it: its stdout and stderr, its stdin (read only when
 * the command asks for the prompt there), its signals and its terminal's answers, all over the
 * client's socket (./wire.ts). What the client sends is checked here: an answer that is not one
 * of the question's choices is a deny.
 */
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { PROMPT_ANSWERS, type ElicitationReply, type PromptAnswer, type TurnPrompter } from '../../app/terminal-questions.js';
import type { CliIo } from '../io.js';
import type { ClientMessage, LineChannel, ServerMessage } from './wire.js';

type Channel = LineChannel<ClientMessage, ServerMessage>;
type RunRequest = Extract<ClientMessage, { t: 'run' }>;

function remoteWritable(channel: Channel, fd: 1 | 2, isTTY: boolean): Writable {
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      channel.send({ t: 'out', fd, data: typeof chunk === 'string' ? chunk : chunk.toString('utf8') });
      done();
    },
  });
  return Object.assign(stream, { isTTY });
}

/** The client's stdin: asked for on the command's first read (a prompt given after `--` never reads it). */
function remoteStdin(channel: Channel, isTTY: boolean): Readable & { isTTY: boolean } {
  let asked = false;
  const stream = new Readable({
    read() {
      if (asked) return;
      asked = true;
      channel.send({ t: 'read_stdin' });
    },
  });
  channel.onMessage((message) => {
    if (message.t === 'stdin' && typeof message.data === 'string') stream.push(message.data);
    else if (message.t === 'stdin_end') stream.push(null);
  });
  return Object.assign(stream, { isTTY });
}

function elicitationReply(value: unknown): ElicitationReply {
  if (value === null || typeof value !== 'object') return { action: 'decline' };
  const { action, content } = value as { action?: unknown; content?: unknown };
  if (action === 'decline' || action === 'cancel') return { action };
  if (action !== 'accept') return { action: 'decline' };
  if (content === undefined) return { action };
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return { action: 'decline' };
  const fields = Object.entries(content as Record<string, unknown>);
  const plain = fields.every(([, field]) => ['string', 'number', 'boolean'].includes(typeof field) || (Array.isArray(field) && field.every((item) => typeof item === 'string')));
  return plain ? { action, content: Object.fromEntries(fields) as Record<string, string | number | boolean | string[]> } : { action: 'decline' };
}

/** Asks the client's terminal; no terminal there, no one is asked (everything not granted is denied). */
function remotePrompter(channel: Channel, interactive: boolean): TurnPrompter {
  let nextId = 0;
  const waiting = new Map<number, (answer: unknown) => void>();
  channel.onMessage((message) => {
    if (message.t !== 'answer') return;
    waiting.get(message.id)?.(message.answer);
    waiting.delete(message.id);
  });
  channel.socket.once('close', () => {
    for (const settle of waiting.values()) settle(undefined);
    waiting.clear();
  });
  const ask = (kind: 'permission' | 'elicitation', question: unknown, signal: AbortSignal) =>
    new Promise<unknown>((resolve) => {
      const id = (nextId += 1);
      if (signal.aborted || channel.socket.destroyed) return resolve(undefined);
      waiting.set(id, resolve);
      signal.addEventListener('abort', () => {
        if (!waiting.delete(id)) return;
        channel.send({ t: 'cancel', id });
        resolve(undefined);
      });
      channel.send({ t: 'ask', id, kind, question });
    });
  return {
    interactive,
    async ask(question, signal) {
      const answer = await ask('permission', question, signal);
      return PROMPT_ANSWERS.includes(answer as PromptAnswer) && question.choices.includes(answer as PromptAnswer) ? (answer as PromptAnswer) : 'deny';
    },
    async elicit(question, signal) {
      return elicitationReply(await ask('elicitation', question, signal));
    },
  };
}

/** The io a client's `ward run` runs with in the service; `signals` gets SIGHUP when the client goes away mid-turn. */
export function remoteIo(channel: Channel, request: RunRequest, env: NodeJS.ProcessEnv): CliIo {
  const signals = new EventEmitter();
  channel.onMessage((message) => {
    if (message.t === 'signal' && ['SIGINT', 'SIGTERM', 'SIGHUP'].includes(message.name)) signals.emit(message.name, message.name);
  });
  // A client killed or its terminal closed: its turn stops as it would have in that process.
  channel.socket.once('close', () => signals.emit('SIGHUP', 'SIGHUP'));
  const tty = request.tty;
  return {
    stdout: remoteWritable(channel, 1, tty.stdout === true),
    stderr: remoteWritable(channel, 2, tty.stderr === true),
    stdin: remoteStdin(channel, tty.stdin === true),
    env,
    origin: { cwd: request.cwd, signals, prompter: remotePrompter(channel, tty.stdin === true && tty.stderr === true) },
  };
}
