import { main } from './main.js';

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
