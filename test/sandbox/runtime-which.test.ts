/**
 * The sandbox runtime's `which` (patched by scripts/patch-dependencies.mjs to search PATH in
 * process instead of spawning `which`, issue 29) finds what the `which` command finds: the first
 * entry holding a regular file this process may execute, an empty entry meaning the working
 * directory, a name with a slash taken as it is.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCHES } from '../../scripts/patch-dependencies.mjs';
import { tempDir } from '../support/temp.js';

const whichPatch = PATCHES.find((patch) => patch.file === 'dist/utils/which.js')!;

function whichCommand(bin: string, searched: string): string | null {
  const found = spawnSync('which', [bin], { encoding: 'utf8', env: { PATH: searched } });
  return found.status === 0 ? found.stdout.trim() : null;
}

describe('the sandbox runtime’s which', () => {
  it('test_it_finds_what_the_which_command_finds_skipping_folders_and_files_it_may_not_execute', async () => {
    const root = path.dirname(createRequire(import.meta.url).resolve(`${whichPatch.pkg}/package.json`));
    const { whichSync } = (await import(path.join(root, whichPatch.file))) as { whichSync(bin: string): string | null };
    // Before the system's folders: a folder named like a program, a program that may not be executed, and one only here.
    const dir = tempDir('ward-which-');
    fs.mkdirSync(path.join(dir, 'bwrap'));
    fs.writeFileSync(path.join(dir, 'socat'), '#!/bin/sh\n', { mode: 0o644 });
    fs.writeFileSync(path.join(dir, 'ward-only-here'), '#!/bin/sh\n', { mode: 0o755 });
    const saved = process.env.PATH ?? '';
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      for (const searched of [saved, `${dir}:${saved}`, `:${saved}`, `${saved}:`]) {
        process.env.PATH = searched;
        for (const bin of ['bwrap', 'socat', 'rg', 'sh', 'ward-only-here', 'ward-no-such-program', '/usr/bin/bwrap', `${dir}/socat`]) {
          expect({ bin, searched, found: whichSync(bin) }).toEqual({ bin, searched, found: whichCommand(bin, searched) });
        }
      }
    } finally {
      process.chdir(cwd);
      process.env.PATH = saved;
    }
    expect(whichSync('ward-only-here')).toBeNull();
  });
});
