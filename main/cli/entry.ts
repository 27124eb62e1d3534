/**
 * The `ward` program. It imports only what tells a `ward run` from another command: a run says it
 * is starting (the audit sender holds its batches from then on, issue 28) before the commands,
 * the app and their packages load, a hundred milliseconds and more of the CLI's start.
 */
import { escapeInvisible } from '../../common/display.js';
import { announceTurn } from '../app/turn-announcement.js';
import { resolveWardHome } from '../base/home.js';
import { traceMark } from '../base/trace.js';
import { asksForHelp, splitCommandLine } from './command-line.js';

// Everything Ward writes (databases, their WAL, run folders, keys in the file store) is the user's alone.
process.umask(0o077);

/** Commands that read only a bundle file: run from their own lean build (bundle-main.ts), their `--help` from main's. */
const BUNDLE_COMMANDS = new Set(['review', 'verify-bundle']);

async function run(argv: readonly string[]): Promise<number> {
  const { name, args } = splitCommandLine(argv);
  if (name === 'run' && !asksForHelp(args)) {
    process.once('exit', announceTurn(resolveWardHome(process.env)));
    // The background service runs the turn if it can (issue 29); this process loads none of the run code then.
    // Without a login session's runtime folder there is none (service/place.ts): nothing of it is loaded
    // unless WARD_SERVICE asks for something, whose value the client then checks.
    const { WARD_SERVICE, XDG_RUNTIME_DIR } = process.env;
    if (WARD_SERVICE !== 'off' && (XDG_RUNTIME_DIR !== undefined || WARD_SERVICE !== undefined)) {
      const { runThroughService } = await import('./service/client.js');
      const code = await runThroughService(args, process.env);
      if (code !== null) return code;
    }
  }
  const { ignoreClosedReader } = await import('./io.js');
  // The guard in front of stdout sees the same error; the process stream must not throw it either.
  process.stdout.on('error', ignoreClosedReader);
  if (name === undefined || !BUNDLE_COMMANDS.has(name) || asksForHelp(args)) {
    const [{ main }, { startBackgroundSender }] = await Promise.all([import('./main.js'), import('./background-sender.js')]);
    traceMark('modules-loaded');
    return main(argv, undefined, () => startBackgroundSender(process.env));
  }
  const { runBundleCommand } = await import('./bundle-main.js');
  traceMark('command-loaded');
  return runBundleCommand(name, args);
}

// Let stdout drain before exiting, so piped output is never cut short.
run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ward: ${escapeInvisible(String(error))}\n`);
    process.exitCode = 1;
  },
);
