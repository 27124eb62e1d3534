import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Setup file of the `unit` project: starting a process throws, so a unit test that reaches a
 * spawn through code it calls (not only through its own imports) fails at once instead of
 * quietly making the fast loop slow. Such a test belongs in the `integration` project.
 */
const starters = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
for (const name of starters) {
  Reflect.set(childProcess, name, () => {
    throw new Error(`a unit test started a child process (child_process.${name}); list the test file outside test/unit-tests.ts so it runs in the integration project`);
  });
}
// Named imports (`import { spawn } from 'node:child_process'`) see the replacements too.
syncBuiltinESMExports();
