import { WardApp } from '../app/ward-app.js';
import { prompterFor } from '../permissions/terminal-prompter.js';
import { describeError, EXIT, exitCodeFor, isWardError } from '../base/errors.js';
import type { CommandContext } from './command.js';
import { COMMANDS } from './commands/index.js';
import { processIo, writeLine, type CliIo } from './io.js';

async function help(io: CliIo): Promise<void> {
  writeLine(io.stdout, 'usage: ward COMMAND [options]\n\ncommands:');
  for (const entry of COMMANDS) writeLine(io.stdout, `  ${entry.name.padEnd(14)} ${(await entry.load()).summary}`);
  writeLine(io.stdout, '\nward COMMAND --help shows a command\'s usage. Exit codes are listed in README.md.');
}

/** Runs one `ward` invocation and returns its exit code; errors become one line on stderr. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    await help(io);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const entry = COMMANDS.find((candidate) => candidate.name === name);
  if (entry === undefined) {
    writeLine(io.stderr, `ward: unknown command ${JSON.stringify(name)}; run "ward help"`);
    return EXIT.usage;
  }
  const command = await entry.load();
  if (args.includes('--help') || args.includes('-h')) {
    writeLine(io.stdout, `usage: ${command.usage}\n\n${command.summary}`);
    return EXIT.ok;
  }
  let app: WardApp | undefined;
  const context: CommandContext = {
    io,
    // Permission questions of a run go to the person at this terminal, if there is one (P3).
    app: () => (app ??= new WardApp({ env: io.env, prompter: prompterFor(io.stdin, io.stderr) })),
  };
  try {
    return await command.run(args, context);
  } catch (error) {
    if (isWardError(error)) {
      writeLine(io.stderr, `ward ${command.name}: ${error.message}`);
      return exitCodeFor(error.code);
    }
    writeLine(io.stderr, `ward ${command.name}: unexpected error: ${describeError(error)}`);
    return EXIT.failed;
  } finally {
    await app?.close();
  }
}
