import type { Readable, Writable } from 'node:stream';
import { escapeOneLine } from '../../preload/display.js';
import { noOnePrompter, PROMPT_VERB, type PromptAnswer, type PromptQuestion, type Prompter } from './prompter.js';

const KEYS: Record<PromptAnswer, { key: string; label: string }> = {
  once: { key: 'o', label: 'allow once' },
  conversation: { key: 'c', label: 'allow for this conversation' },
  always: { key: 'a', label: 'always allow for this agent in this namespace' },
  deny: { key: 'd', label: 'deny' },
};
const MAX_LINE = 256;
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
    `  tool: ${escapeOneLine(question.tool, 100)}  ${escapeOneLine(question.argumentsSummary, 300)}`,
    `  why asked: ${escapeOneLine(question.reason, 200)}`,
    `  ${choices}`,
    '> ',
  ].join('\n');
}

/**
 * Asks on a terminal, one line per answer. End of input, a signal abort (timeout), or
 * MAX_ATTEMPTS unrecognized lines are a deny.
 */
export function terminalPrompter(input: Readable, output: Writable): Prompter {
  return {
    interactive: true,
    ask(question, signal) {
      return new Promise<PromptAnswer>((resolve) => {
        let buffer = '';
        let attempts = 0;
        let lastCall: NodeJS.Timeout | undefined;
        const finish = (answer: PromptAnswer): void => {
          clearTimeout(lastCall);
          input.off('data', onData);
          input.off('end', onEnd);
          signal.removeEventListener('abort', onAbort);
          input.pause();
          resolve(answer);
        };
        const onAbort = (): void => {
          output.write('\n(no answer in time, or the run ended: denied)\n');
          finish('deny');
        };
        const onEnd = (): void => finish('deny');
        const onData = (chunk: Buffer | string): void => {
          buffer += chunk.toString();
          if (buffer.length > MAX_LINE && !buffer.includes('\n')) buffer = buffer.slice(0, MAX_LINE);
          let newline = buffer.indexOf('\n');
          while (newline >= 0) {
            const line = buffer.slice(0, newline).trim().toLowerCase();
            buffer = buffer.slice(newline + 1);
            const answer = question.choices.find((choice) => KEYS[choice].key === line || choice === line);
            if (answer !== undefined) return finish(answer);
            attempts += 1;
            if (attempts >= MAX_ATTEMPTS) {
              output.write('(no valid answer: denied)\n');
              return finish('deny');
            }
            output.write(`answer one of ${question.choices.map((choice) => KEYS[choice].key).join('/')}\n> `);
            newline = buffer.indexOf('\n');
          }
        };
        if (signal.aborted) return resolve('deny');
        signal.addEventListener('abort', onAbort, { once: true });
        input.on('data', onData);
        input.once('end', onEnd);
        input.resume();
        output.write(renderQuestion(question));
        const untilLastCall = question.expiresAt === undefined ? -1 : question.expiresAt - LAST_CALL_MS - Date.now();
        if (untilLastCall > 0) {
          lastCall = setTimeout(() => output.write(`\n(${formatTimeLeft(LAST_CALL_MS)} left to answer; no answer denies)\n> `), untilLastCall);
        }
      });
    },
  };
}

/** A terminal prompter when both ends are a TTY, else one that never asks (and so denies). */
export function prompterFor(stdin: Readable & { isTTY?: boolean }, stderr: Writable & { isTTY?: boolean }): Prompter {
  return stdin.isTTY === true && stderr.isTTY === true ? terminalPrompter(stdin, stderr) : noOnePrompter;
}
