/**
 * Issue 31: `ward doctor --self-test` printed nothing for seconds, then every line at once. Each
 * check is now printed as it finishes: plain lines on a pipe, and a spinner naming the running
 * check on a terminal. The built command, a real D-Bus socket the test holds unanswered, a real pty.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { onTerminal } from '../support/pty.js';
import { tempDir } from '../support/temp.js';
import { WARD_BIN } from '../support/ward-cli.js';

/**
 * A session bus address whose peer accepts and never answers until `release`: the keychain check
 * cannot finish before then. Released, it hangs up on every connection (a bus that went away).
 */
async function silentBus(dir: string): Promise<{ address: string; release(): void; close(): Promise<void> }> {
  const socket = path.join(dir, 'bus');
  const peers = new Set<net.Socket>();
  let released = false;
  const server = net.createServer((peer) => {
    peer.on('error', () => undefined);
    if (released) peer.destroy();
    else peers.add(peer);
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  const release = () => {
    released = true;
    for (const peer of peers) peer.destroy();
  };
  return { address: `unix:path=${socket}`, release, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('ward doctor shows each check as it finishes', () => {
  it('test_on_a_pipe_the_first_line_arrives_while_a_later_check_still_runs_and_no_spinner_is_drawn', async () => {
    const root = tempDir();
    const bus = await silentBus(root);
    const child = spawn(process.execPath, [WARD_BIN, 'doctor'], {
      env: { PATH: process.env.PATH, HOME: root, WARD_HOME: path.join(root, 'ward'), DBUS_SESSION_BUS_ADDRESS: bus.address },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let firstRead: string | null = null;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (firstRead === null) {
        firstRead = stdout;
        // Only now may the keychain check end (its D-Bus peer goes away).
        bus.release();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    await bus.close();
    expect(firstRead).toMatch(/^ok {13}data folder /);
    expect(firstRead).not.toContain('keychain');
    const names = stdout.trim().split('\n').map((line) => line.slice(15, 38).trim());
    expect(names.slice(0, 3)).toEqual(['data folder', 'namespaces', 'keychain']);
    expect(names.at(-1)).toBe('model');
    // The keychain check ended because the bus hung up, which it did only once the first line
    // was read: that line came while the check still waited (before, the probe's own 3 s bound
    // ended it and every line came after).
    const keychain = stdout.split('\n').find((line) => line.includes(' keychain '));
    expect(keychain).toMatch(/^FAIL {11}keychain {15}the OS credential store is unreachable: /);
    expect(keychain).not.toContain('no answer within');
    // Not a terminal: plain lines, nothing redrawn.
    expect(stderr).toBe('');
    expect(stdout).not.toMatch(/[\r\u001b]/);
    expect(code).toBe(1);
  });

  it('test_on_a_terminal_a_spinner_names_the_running_check_and_is_erased_before_each_line', async () => {
    const root = tempDir();
    const env = { PATH: process.env.PATH, HOME: root, WARD_HOME: path.join(root, 'ward'), TERM: 'dumb' };
    const { screen } = await onTerminal([process.execPath, WARD_BIN, 'doctor'], { env, cwd: root, when: '\u0000never', typed: '', timeoutMs: 60_000 });
    expect(screen).toMatch(/\r\u001b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] checking the keychain…/);
    expect(screen).toMatch(/\r\u001b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] checking the sandbox…/);
    // Each check line starts on an erased line, never after a spinner's text.
    for (const label of ['keychain', 'pinned CLI', 'sandbox', 'model']) {
      expect(screen).toMatch(new RegExp(`(?:^|\\n|\\r\\u001b\\[2K)(?:ok|warn|FAIL|not configured) +${label} `));
    }
    expect(screen).not.toMatch(/…(?:ok|warn|FAIL|not configured) /);
  });
});
