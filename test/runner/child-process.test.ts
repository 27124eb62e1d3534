import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CliProcess } from '../../main/runner/child.js';
import type { CliMessage } from '../../main/runner/stream-parser.js';
import { processGroupAlive } from '../app/runs/harness.js';
import { until } from '../support/wait.js';

/** Live (non-zombie) members of a process group, from /proc. */
function liveMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && Number(fields[2]) === pgid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Real CLI output (2.1.328) replayed by a real child process through a real pipe. */
const RECORDED = fs.readFileSync(new URL('./data/cli-2.1.328-text-turn.jsonl', import.meta.url), 'utf8').trim().split('\n');

function run(script: string, maxLineBytes?: number): Promise<{ messages: CliMessage[]; exit: Awaited<CliProcess['exited']>; pid: number }> {
  const messages: CliMessage[] = [];
  const child = new CliProcess(
    { binary: process.execPath, args: ['-e', script], env: { PATH: process.env.PATH ?? '' }, cwd: process.cwd(), ...(maxLineBytes ? { maxLineBytes } : {}) },
    (batch) => messages.push(...batch),
  );
  child.sendTurn('the prompt');
  child.endInput();
  return child.exited.then((exit) => ({ messages, exit, pid: child.pid! }));
}

describe('the child path: a process, a pipe, the parser', () => {
  it('test_garbage_and_oversized_stdout_lines_become_diagnostics_between_real_cli_lines_the_turn_arrives_on_stdin_as_a_user_line', async () => {
    const script = `
      let input = '';
      process.stdin.on('data', (d) => (input += d)).on('end', () => {
        const out = process.stdout;
        out.write(${JSON.stringify(RECORDED[0])} + '\\n');
        out.write('Segmentation fault (core dumped)\\n');
        out.write('{"type":"assistant","message":{"content":[{"type":"text","text":"' + 'y'.repeat(3 * 1024 * 1024) + '"}]}}\\n');
        out.write(JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'prompt was: ' + input }] } }) + '\\n');
        out.write(${JSON.stringify(RECORDED[2])});
      });`;
    const { messages, exit, pid } = await run(script, 1024 * 1024);
    expect(exit).toMatchObject({ code: 0, signal: null, spawnError: null });
    expect(messages.map((message) => (message.kind === 'diagnostic' ? `diagnostic:${message.reason}` : message.kind))).toEqual([
      'init',
      'diagnostic:unparseable',
      'diagnostic:oversized',
      'assistant_text',
      'result',
    ]);
    expect(messages[3]).toMatchObject({ text: `prompt was: ${JSON.stringify({ type: 'user', message: { role: 'user', content: 'the prompt' } })}\n` });
    expect(processGroupAlive(pid)).toBe(false);
  });

  it('test_an_executable_that_cannot_start_is_reported_as_a_spawn_error_not_a_crash', async () => {
    const child = new CliProcess({ binary: '/nonexistent/claude', args: [], env: {}, cwd: process.cwd() }, () => undefined);
    const exit = await child.exited;
    expect(exit.spawnError).toMatch(/ENOENT/);
    expect(child.pid).toBeUndefined();
  });

  it('test_killgroup_ends_the_child_and_what_it_started', async () => {
    const messages: CliMessage[] = [];
    const child = new CliProcess(
      {
        binary: process.execPath,
        args: ['-e', `require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'inherit' }); setTimeout(() => {}, 60000);`],
        env: { PATH: process.env.PATH ?? '' },
        cwd: process.cwd(),
      },
      (batch) => messages.push(...batch),
    );
    await until(() => liveMembers(child.pid!).length === 2, 'the child and its grandchild');
    child.killGroup();
    const exit = await child.exited;
    expect(exit.signal).toBe('SIGKILL');
    await until(() => liveMembers(child.pid!).length === 0, 'the whole group to be gone', 5_000);
  });
});
