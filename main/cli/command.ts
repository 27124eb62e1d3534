import { parseArgs, type ParseArgsConfig } from 'node:util';
import { WardError } from '../core/errors.js';
import type { WardCore } from '../core/ward-core.js';
import { resolveNamespace, type Namespace } from '../namespaces/namespace.js';
import { loadPolicy } from '../policy/policy.js';
import type { CliIo } from './io.js';

export interface CommandContext {
  readonly io: CliIo;
  /** Created on first use so commands that need no data folder start fast. */
  core(): WardCore;
}

export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(args: readonly string[], context: CommandContext): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options most commands share. */
export const COMMON_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies Options;

/** Strict parsing: an unknown flag or a missing value is a usage error naming it. */
export function parseCommandArgs<T extends Options>(command: Pick<Command, 'usage'>, args: readonly string[], options: T, allowPositionals = true) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals });
  } catch (error) {
    throw new WardError('usage', `${(error as Error).message.split('\n')[0]}\nusage: ${command.usage}`, { cause: error });
  }
}

/**
 * The namespace from `--namespace`, `WARD_NAMESPACE`, the admin policy's fixed namespace, or
 * "default"; sources that disagree fail closed (a malformed policy fails closed too).
 */
export function namespaceFrom(flag: string | undefined, io: CliIo): Namespace {
  return resolveNamespace({ flag, env: io.env.WARD_NAMESPACE, policy: loadPolicy(io.env)?.namespace ?? undefined });
}

export function requirePositional(command: Pick<Command, 'usage'>, positionals: readonly string[], index: number, what: string): string {
  const value = positionals[index];
  if (value === undefined) throw new WardError('usage', `missing ${what}\nusage: ${command.usage}`);
  return value;
}
