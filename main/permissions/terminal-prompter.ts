import type { Readable, Writable } from 'node:stream';
import { escapeOneLine, showArguments } from '../../common/display.js';
import type { ElicitationField, ElicitationReply, ElicitationValue } from '../upstreams/elicitation.js';
import { completeContent, ElicitationRefusal } from '../upstreams/elicitation.js';
import { noOnePrompter, PROMPT_VERB, type ElicitationQuestion, type PromptAnswer, type PromptQuestion, type Prompter } from './prompter.js';

const KEYS: Record<PromptAnswer, { key: string; label: string }> = {
  once: { key: 'o', label: 'allow once' },
  conversation: { key: 'c', label: 'allow for this conversation' },
  always: { key: 'a', label: 'always allow for this agent in this namespace' },
  deny: { key: 'd', label: 'deny' },
};
const MAX_LINE = 256;
/** A form's text answers may be longer than a key. */
const MAX_FIELD_LINE = 4_096;
const MAX_ATTEMPTS = 3;
/** A terminal line cannot count down under what is being typed: one reminder this long before the deny (the desktop's last call). */
const LAST_CALL_MS = 20_000;

/** "4m 58s", "20s": time left, rounded up to the second. */
export function formatTimeLeft(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1_000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}

/** The question as terminal lines: every model-controlled part escaped and bounded (P1). */
export function renderQuestion(question: PromptQuestion, now = Date.now()): string {
  const deadline = question.expiresAt === undefined ? '' : `  (answer within ${formatTimeLeft(question.expiresAt - now)}; no answer denies)`;
  const choices = question.choices.map((choice) => `[${KEYS[choice].key}] ${KEYS[choice].label}`).join('  ') + deadline;
  return [
    '',
    `Ward: agent ${escapeOneLine(question.agent, 64)} (namespace ${escapeOneLine(question.namespace, 32)}) wants to ${PROMPT_VERB[question.kind]} ${escapeOneLine(question.value, 300)}`,
    ...(question.command === undefined ? [] : [`  command: ${question.command}`]),
    // Padding in the arguments shows as a count, as on the desktop's card.
    `  tool: ${escapeOneLine(question.tool, 100)}  ${showArguments(question.argumentsSummary, 300)}`,
    `  why asked: ${escapeOneLine(question.reason, 200)}`,
    `  ${choices}`,
    '> ',
  ].join('\n');
}

/** What a server's request looks like on the terminal: its name and message, escaped and bounded. */
export function renderElicitation(question: ElicitationQuestion): string {
  const { request } = question;
  const who = `Ward: the server ${escapeOneLine(question.server, 64)} (agent ${escapeOneLine(question.agent, 64)}, namespace ${escapeOneLine(question.namespace, 32)})`;
  const lines = ['', request.mode === 'url' ? `${who} asks you to open a page:` : `${who} asks for input:`, `  ${escapeOneLine(request.message, 1_000)}`];
  if (request.mode === 'url') lines.push(`  ${escapeOneLine(request.url.href, 500)}`, '  (its answer goes to the server only, never to the model)', '  [o] open it in the browser  [d] decline  [c] cancel', '> ');
  else lines.push('  (answers go to the server only, never to the model; an empty answer takes the default)');
  return lines.join('\n');
}

function fieldPrompt(field: ElicitationField): string {
  const what =
    field.kind === 'number'
      ? field.integer
        ? 'whole number'
        : 'number'
      : field.kind === 'boolean'
        ? 'y/n'
        : field.kind === 'enum'
          ? 'one number'
          : field.kind === 'multi'
            ? 'numbers, comma-separated'
            : (field.format ?? 'text');
  const fallback = field.default === undefined ? '' : `, default ${escapeOneLine(Array.isArray(field.default) ? field.default.join(', ') : String(field.default), 100)}`;
  const lines = [`  ${escapeOneLine(field.title, 100)} (${what}${fallback}${field.required ? ', required' : ''}${field.sensitive ? ', sensitive: shown as you type' : ''})`];
  if (field.description !== '') lines.push(`    ${escapeOneLine(field.description, 300)}`);
  if (field.kind === 'enum' || field.kind === 'multi') field.options.forEach((option, index) => lines.push(`    ${index + 1}) ${escapeOneLine(option.label, 100)}`));
  lines.push('  > ');
  return lines.join('\n');
}

/** A typed line as the field's value; undefined for an empty line (the default, or left out). */
function valueOf(field: ElicitationField, line: string): ElicitationValue | undefined {
  if (line === '') return undefined;
  const choice = (text: string): string => {
    const index = Number(text);
    const options = field.kind === 'enum' || field.kind === 'multi' ? field.options : [];
    return Number.isInteger(index) && index >= 1 && index <= options.length ? options[index - 1]!.value : text;
  };
  switch (field.kind) {
    case 'number':
      return Number(line);
    case 'boolean':
      return /^(y|yes|true)$/i.test(line) ? true : /^(n|no|false)$/i.test(line) ? false : line;
    case 'enum':
      return choice(line);
    case 'multi':
      return line.split(',').map((part) => choice(part.trim()));
    case 'string':
      return line;
  }
}

type RawCapable = Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => void };

/**
 * Reads answers from a terminal. One question at a time (permission questions and server
 * requests of parallel calls wait their turn); what was typed ahead of a question is dropped.
 */
class TerminalLines {
  private buffer = '';
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly input: Readable) {}

  /** Whether answers are single keys: a terminal that can be put in raw mode. */
  get raw(): boolean {
    const input = this.input as RawCapable;
    return input.isTTY === true && typeof input.setRawMode === 'function';
  }

  /** Runs one question with the terminal to itself. */
  exclusive<T>(question: () => Promise<T>): Promise<T> {
    const run = this.turn.then(() => {
      this.buffer = '';
      return question();
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  /**
   * One key on a terminal (raw mode, held by `withKeys`, no Enter), lowercased; on anything else the next line, as
   * `next` reads it. Null at end of input, on Ctrl-D, or when `signal` aborts. Ctrl-C in raw mode
   * reaches no signal handler by itself: it is sent on as SIGINT (Ward's own stop) and answers null.
   */
  async key(signal: AbortSignal): Promise<string | null> {
    if (!this.raw) return this.next(signal, MAX_LINE);
    for (;;) {
      const chunk = await this.chunk(signal);
      if (chunk === null) return null;
      // Enter out of habit, after the key or alone, is not an answer.
      const key = chunk.replace(/[\r\n]/g, '').slice(0, 1);
      if (key === '') continue;
      if (key === '\u0003') process.kill(process.pid, 'SIGINT');
      return key === '\u0003' || key === '\u0004' ? null : key.toLowerCase();
    }
  }

  /**
   * Raw mode for `key` while `question` runs, entered before the question is shown: a key typed
   * the moment it appears must not meet a terminal still echoing and buffering lines.
   */
  async withKeys<T>(question: () => Promise<T>): Promise<T> {
    const input = this.input as RawCapable;
    if (!this.raw) return question();
    input.setRawMode!(true);
    try {
      return await question();
    } finally {
      input.setRawMode!(false);
    }
  }

  /** What arrives next on the input, whole; null at end of input or when `signal` aborts. */
  private chunk(signal: AbortSignal): Promise<string | null> {
    const input = this.input;
    return new Promise((resolve) => {
      const finish = (text: string | null): void => {
        input.off('data', onData);
        input.off('end', onEnd);
        signal.removeEventListener('abort', onEnd);
        input.pause();
        resolve(text);
      };
      const onData = (chunk: Buffer | string): void => finish(chunk.toString());
      const onEnd = (): void => finish(null);
      if (signal.aborted) return resolve(null);
      signal.addEventListener('abort', onEnd, { once: true });
      input.on('data', onData);
      input.once('end', onEnd);
      input.resume();
    });
  }

  /** The next line, trimmed; null at end of input or when `signal` aborts. */
  async next(signal: AbortSignal, maxLine: number): Promise<string | null> {
    for (;;) {
      const newline = this.buffer.indexOf('\n');
      if (newline >= 0) {
        const line = this.buffer.slice(0, newline).trim();
        this.buffer = this.buffer.slice(newline + 1);
        return line;
      }
      const chunk = await this.chunk(signal);
      if (chunk === null) return null;
      this.buffer += chunk;
      if (this.buffer.length > maxLine && !this.buffer.includes('\n')) this.buffer = this.buffer.slice(0, maxLine);
    }
  }
}

export interface TerminalPrompterOptions {
  /** Opens an accepted URL elicitation (the system browser); without it the person is told to open it. */
  readonly openUrl?: (url: URL) => Promise<void>;
}

/** One permission question, asked until a choice is recognized (MAX_ATTEMPTS); withdrawn or unanswered, it denies. */
async function askQuestion(lines: TerminalLines, output: Writable, question: PromptQuestion, signal: AbortSignal): Promise<PromptAnswer> {
  const withdrawn = (): PromptAnswer => {
    output.write('\n(no answer in time, or the run ended: denied)\n');
    return 'deny';
  };
  // Withdrawn while waiting for its turn.
  if (signal.aborted) return withdrawn();
  return lines.withKeys(() => answerQuestion(lines, output, question, signal, withdrawn));
}

async function answerQuestion(lines: TerminalLines, output: Writable, question: PromptQuestion, signal: AbortSignal, withdrawn: () => PromptAnswer): Promise<PromptAnswer> {
  output.write(renderQuestion(question));
  // One reminder shortly before the deny: a line cannot count down while the person types.
  const untilLastCall = question.expiresAt === undefined ? -1 : question.expiresAt - LAST_CALL_MS - Date.now();
  const lastCall = untilLastCall > 0 ? setTimeout(() => output.write(`\n(${formatTimeLeft(LAST_CALL_MS)} left to answer; no answer denies)\n> `), untilLastCall) : undefined;
  try {
    for (let attempts = 1; ; attempts++) {
      const line = await lines.key(signal);
      if (line === null) return signal.aborted ? withdrawn() : 'deny';
      const answer = question.choices.find((choice) => KEYS[choice].key === line.toLowerCase() || choice === line.toLowerCase());
      if (answer !== undefined) {
        // Raw mode echoes nothing: show the key that was taken.
        if (lines.raw) output.write(`${KEYS[answer].key}\n`);
        return answer;
      }
      if (attempts >= MAX_ATTEMPTS) {
        output.write('(no valid answer: denied)\n');
        return 'deny';
      }
      output.write(`${lines.raw ? '\n' : ''}answer one of ${question.choices.map((choice) => KEYS[choice].key).join('/')}\n> `);
    }
  } finally {
    clearTimeout(lastCall);
  }
}

/**
 * Asks on a terminal: a permission question takes one key (a line where the input is no
 * terminal), a server's form one line per field. End of input, a signal abort (timeout), or
 * MAX_ATTEMPTS unrecognized lines are a deny (a decline for a server's request).
 */
export function terminalPrompter(input: Readable, output: Writable, options: TerminalPrompterOptions = {}): Prompter {
  const lines = new TerminalLines(input);

  /** One field, asked until it fits (MAX_ATTEMPTS); null when the person gave up, ran out of input or time ran out. */
  const askField = async (field: ElicitationField, signal: AbortSignal): Promise<{ value: ElicitationValue | undefined } | null> => {
    output.write(fieldPrompt(field));
    for (let attempts = 1; ; attempts++) {
      const line = await lines.next(signal, MAX_FIELD_LINE);
      if (line === null) return null;
      const value = valueOf(field, line);
      try {
        completeContent([field], value === undefined ? {} : { [field.name]: value });
        return { value };
      } catch (error) {
        if (attempts >= MAX_ATTEMPTS || !(error instanceof ElicitationRefusal)) return null;
        output.write(`  ${escapeOneLine(error.message, 200)}; try again\n  > `);
      }
    }
  };

  const choose = async (keys: Record<string, ElicitationReply['action']>, signal: AbortSignal): Promise<ElicitationReply['action'] | null> => {
    for (let attempts = 1; attempts <= MAX_ATTEMPTS; attempts++) {
      const line = await lines.next(signal, MAX_LINE);
      if (line === null) return null;
      const action = keys[line.toLowerCase()];
      if (action !== undefined) return action;
      output.write(`answer one of ${Object.keys(keys).join('/')}\n> `);
    }
    return null;
  };

  const elicit = async (question: ElicitationQuestion, signal: AbortSignal): Promise<ElicitationReply> => {
    const { request } = question;
    if (signal.aborted) return { action: 'decline' };
    output.write(renderElicitation(question));
    const gaveUp = (): ElicitationReply => {
      output.write(signal.aborted ? '\n(no answer in time, or the run ended: declined)\n' : '(no valid answer: declined)\n');
      return { action: 'decline' };
    };
    if (request.mode === 'url') {
      const action = await choose({ o: 'accept', d: 'decline', c: 'cancel' }, signal);
      if (action === null) return gaveUp();
      if (action === 'accept') {
        if (options.openUrl === undefined) output.write(`Open this address in a browser: ${escapeOneLine(request.url.href, 2_000)}\n`);
        else await options.openUrl(request.url).catch(() => output.write(`The browser did not open; visit: ${escapeOneLine(request.url.href, 2_000)}\n`));
      }
      return { action };
    }
    output.write('\n');
    const content: Record<string, ElicitationValue> = {};
    for (const field of request.fields) {
      const answer = await askField(field, signal);
      if (answer === null) return gaveUp();
      if (answer.value !== undefined) content[field.name] = answer.value;
    }
    output.write('  [a] accept and send  [d] decline  [c] cancel\n> ');
    const action = await choose({ a: 'accept', d: 'decline', c: 'cancel' }, signal);
    if (action === null) return gaveUp();
    return action === 'accept' ? { action, content: completeContent(request.fields, content) } : { action };
  };

  return {
    interactive: true,
    ask: (question, signal) => lines.exclusive(() => askQuestion(lines, output, question, signal)),
    elicit: (question, signal) => lines.exclusive(() => elicit(question, signal)),
  };
}

/** A terminal prompter when both ends are a TTY, else one that never asks (and so denies). */
export function prompterFor(stdin: Readable & { isTTY?: boolean }, stderr: Writable & { isTTY?: boolean }, options: TerminalPrompterOptions = {}): Prompter {
  return stdin.isTTY === true && stderr.isTTY === true ? terminalPrompter(stdin, stderr, options) : noOnePrompter;
}
