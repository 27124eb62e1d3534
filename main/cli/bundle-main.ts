/**
 * `ward review` and `ward verify-bundle`, built on their own into one file (scripts/build.mjs):
 * they read only the bundle they are given, so they load the bundle reader, the event schemas and
 * the printer, and none of the chunks the other commands share (issue 27: a reviewer's first
 * screen within a second). entry.ts sends them here; `--help` and in-process callers go through
 * main.ts, which runs the same commands.
 */
import type { Command } from './command.js';
import { reviewCommand } from './commands/review.js';
import { verifyBundleCommand } from './commands/verify-bundle.js';
import { processIo } from './io.js';
import { runCommand } from './run-command.js';

const COMMANDS: readonly Command[] = [reviewCommand, verifyBundleCommand];

/** Runs `ward NAME ARGS` for one of the bundle commands; its exit code. */
export function runBundleCommand(name: string, args: readonly string[]): Promise<number> {
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) throw new Error(`ward ${name} is not a bundle command`);
  return runCommand(command, args, processIo(), null);
}
