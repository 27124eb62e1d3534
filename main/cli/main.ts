import type { StartSender } from '../app/audit-sender.js';
import type { WardApp } from '../app/ward-app.js';
import { PINNED_CLI_VERSION, wardVersion } from '../app/version.js';
import { traceMark } from '../base/trace.js';
import { EXIT } from '../base/errors.js';
import { COMMANDS } from './commands/index.js';
import { processIo, writeLine, type CliIo } from './io.js';
import { asksForHelp, splitCommandLine } from './command-line.js';
import { runCommand } from './run-command.js';

function help(io: CliIo): void {
  writeLine(io.stdout, 'usage: ward COMMAND [options]\n\ncommands:');
  for (const entry of COMMANDS) writeLine(io.stdout, `  ${entry.name.padEnd(14)} ${entry.summary}`);
  writeLine(io.stdout, '\nward COMMAND --help shows a command\'s usage; ward --version shows the version. Exit codes are listed in README.md.');
}

/**
 * How a command makes its app, loaded only for a command that runs: `ward --version`, help and
 * usage never load the stores, the native modules or the policy readers (issue 19).
 */
async function appFactory(io: CliIo, auditSender: StartSender | undefined): Promise<() => WardApp> {
  const { terminalApp } = await import('../app/terminal-app.js');
  return () => terminalApp(io.env, io.stdin, io.stderr, auditSender);
}

/**
 * Runs one `ward` invocation and returns its exit code; errors become one line on stderr.
 * `auditSender`: how to start the background audit sender (the `ward` program, not a test calling this in-process).
 */
export async function main(argv: readonly string[], io: CliIo = processIo(), auditSender?: StartSender): Promise<number> {
  const { name, args } = splitCommandLine(argv);
  if (name === '--version' || name === '-V' || name === 'version') {
    writeLine(io.stdout, `ward ${wardVersion()} (pinned Claude CLI ${PINNED_CLI_VERSION})`);
    return EXIT.ok;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    help(io);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const entry = COMMANDS.find((candidate) => candidate.name === name);
  if (entry === undefined) {
    writeLine(io.stderr, `ward: unknown command ${JSON.stringify(name)}; run "ward help"`);
    return EXIT.usage;
  }
  // Before the command's code makes its schemas; `ward --version` and help load no zod at all.
  await import('./zod-jitless.js');
  const command = await entry.load();
  traceMark('command-loaded');
  if (asksForHelp(args)) {
    writeLine(io.stdout, `usage: ${command.usage}\n\n${entry.summary}${command.details === undefined ? '' : `\n\n${command.details}`}`);
    return EXIT.ok;
  }
  return runCommand(command, args, io, command.appless === true ? null : await appFactory(io, auditSender));
}
