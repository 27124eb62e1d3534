/**
 * Issue 29: a `ward` command's schemas validate without zod compiling a parser for each (a
 * `ward run` compiled 32, ~10 ms); `ward --version` and help do not load zod for it.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { config } from 'zod';
import { main } from '../../main/cli/main.js';

function io() {
  return { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} };
}

describe('zod in the ward command', () => {
  it('test_a_command_is_loaded_with_zod_jitless_and_the_version_leaves_it_as_it_was', async () => {
    expect(await main(['--version'], io())).toBe(0);
    expect(config().jitless).not.toBe(true);
    expect(await main(['run', '--help'], io())).toBe(0);
    expect(config().jitless).toBe(true);
  });
});
