import { parseArgs, type ParseArgsConfig } from 'node:util';
import { WardError } from '../base/errors.js';
import type { WardApp } from '../app/ward-app.js';
import type { CliIo } from './io.js';

export interface CommandContext {
  readonly io: CliIo;
  /** The app (data folder, policy, services), created on first use so commands that need none start fast. */
  app(): WardApp;
}

export interface Command {
  readonly name: string;
  readonly usage: string;
  /** More for `--help` than the usage line: the environment it reads, what flags mean. */
  readonly details?: string;
  /** True for a command that reads only the files it is given (a bundle): it starts without loading the app's stores and services. */
  readonly appless?: true;
  run(args: readonly string[], context: CommandContext): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options most commands share. */
export const COMMON_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies Options;

/**
 * Strict parsing: an unknown flag or a missing value is a usage error naming it, and so is a
 * single-value flag given twice or a flag given an empty value (never "the last one wins" or
 * "empty means the default").
 */
export function parseCommandArgs<T extends Options>(command: Pick<Command, 'usage'>, args: readonly string[], options: T, allowPositionals = true) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals, tokens: true });
  } catch (error) {
    throw new WardError('usage', `${(error as Error).message.split('\n')[0]}\nusage: ${command.usage}`, { cause: error });
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (option?.type === 'string' && token.value === '') throw new WardError('usage', `--${token.name} needs a value, not an empty one\nusage: ${command.usage}`);
    if (!option?.multiple && seen.has(token.name)) throw new WardError('usage', `--${token.name} is given more than once\nusage: ${command.usage}`);
    seen.add(token.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

export function requirePositional(command: Pick<Command, 'usage'>, positionals: readonly string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined) throw new WardError('usage', `missing ${what}\nusage: ${command.usage}`);
  return value;
}

/** A numeric flag: digits only (no sign, no exponent), bounded; `fallback` when absent. */
export function parseWholeNumber(value: string | undefined, flag: string, what: string, fallback = 0): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,15}$/.test(value)) throw new WardError('usage', `${flag} takes ${what}, not ${JSON.stringify(value.slice(0, 20))}`);
  return Number(value);
}
