import type { WardApp } from '../app/ward-app.js';
import { traceMark } from '../base/trace.js';
import { damagedDatabaseError, describeError, EXIT, exitCodeFor, isWardError } from '../base/errors.js';
import type { Command, CommandContext } from './command.js';
import { writeLine, type CliIo } from './io.js';

/**
 * Runs one loaded command and returns its exit code; errors become one line on stderr. Apart from
 * main.ts (the command list, the app factory), so `ward review` and `ward verify-bundle` run it
 * from their own lean build (bundle-main.ts). `makeApp` is null for an appless command.
 */
export async function runCommand(command: Command, args: readonly string[], io: CliIo, makeApp: (() => WardApp) | null): Promise<number> {
  let app: WardApp | undefined;
  try {
    return await runInContext(command, args, {
      io,
      app: () => {
        if (makeApp === null) throw new Error(`ward ${command.name} runs without an app`);
        return (app ??= makeApp());
      },
    });
  } finally {
    await app?.close();
    traceMark('app-closed');
  }
}

/** The same with an app the caller keeps (the `ward` service runs its clients' commands in its one app). */
export async function runInContext(command: Command, args: readonly string[], context: CommandContext): Promise<number> {
  try {
    return await command.run(args, context);
  } catch (thrown) {
    const error = damagedDatabaseError(thrown) ?? thrown;
    if (isWardError(error)) {
      writeLine(context.io.stderr, `ward ${command.name}: ${error.message}`);
      return exitCodeFor(error.code);
    }
    writeLine(context.io.stderr, `ward ${command.name}: unexpected error: ${describeError(error)}`);
    return EXIT.failed;
  }
}
