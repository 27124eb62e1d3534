import { traceMark } from '../base/trace.js';
import { main } from './main.js';

traceMark('modules-loaded');

// Everything Ward writes (databases, their WAL, run folders, keys in the file store) is the user's alone.
process.umask(0o077);

// A reader that goes away (`ward replay ID | head`) is not our failure: later output is
// dropped and the command finishes normally (`ward run` also stops its turn, see run.ts).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
});

// Let stdout drain before exiting, so piped output is never cut short.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ward: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
