import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Tests run the built `ward` and the built renderer. `npm test` builds first; a bare `vitest run`
 * on a checkout without a build gets one here, once, before any test file starts. (Test files
 * must not rebuild: a rebuild replaces dist/cli/chunks under suites running `ward` in parallel.)
 */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..');
  const built = ['dist/cli/entry.js', 'dist/renderer/index.html'].every((file) => fs.existsSync(path.join(root, file)));
  if (!built) execFileSync(process.execPath, ['scripts/build.mjs', 'all'], { cwd: root, stdio: 'inherit' });
}
