import { escapeInvisible } from '../../common/display.js';
import { traceMark } from '../base/trace.js';
import { ignoreClosedReader } from './io.js';
import { main } from './main.js';

traceMark('modules-loaded');

// Everything Ward writes (databases, their WAL, run folders, keys in the file store) is the user's alone.
process.umask(0o077);

// The guard in front of stdout sees the same error; the process stream must not throw it either.
process.stdout.on('error', ignoreClosedReader);

// Let stdout drain before exiting, so piped output is never cut short.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ward: ${escapeInvisible(String(error))}\n`);
    process.exitCode = 1;
  },
);
