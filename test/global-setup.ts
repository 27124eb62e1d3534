import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The CLI tests run the built `ward`; build it when a bare `vitest run` finds no build. */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, '..');
  if (!fs.existsSync(path.join(root, 'dist', 'cli', 'entry.js'))) {
    execFileSync(process.execPath, ['scripts/build.mjs', 'main'], { cwd: root, stdio: 'inherit' });
  }
}
