// The two test suites of `npm test`, in turn: every vitest suite (inside the test services),
// then the MCP conformance suite. The second runs even when the first fails, so one red run
// shows both results; the exit code is the first failure's.
import { spawnSync } from 'node:child_process';

const suites = [
  { name: 'vitest', args: ['scripts/with-test-services.mjs', 'vitest', 'run'] },
  { name: 'conformance', args: ['scripts/conformance.mjs'] },
];

let exitCode = 0;
const results = [];
for (const suite of suites) {
  const { status, signal } = spawnSync(process.execPath, suite.args, { stdio: 'inherit' });
  const code = status ?? 1;
  results.push(`${suite.name} ${code === 0 ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`}`);
  if (exitCode === 0) exitCode = code;
}
console.log(`npm test: ${results.join(', ')}`);
process.exit(exitCode);
