/**
 * Issue 29: the sandbox's network bridge (socat, through native-helpers/linux/socat-dies-with-parent)
 * sends each write at once on its TCP ends. With Nagle's algorithm the CLI's request body waited
 * for the proxy's delayed ACK of its headers, ~37 ms of every sandboxed model call (bench/turn.ts,
 * "the gateway: request read + credential"). Checked on the real bridges of a live warm session:
 * Ward's own (host side: UNIX-LISTEN to the proxy's TCP port) and the ones inside the sandbox
 * (TCP-LISTEN for the CLI to UNIX-CONNECT). The speed itself is the bench's to show.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { childrenOf } from '../../main/runner/process-tree.js';
import { closeHarnessesAfterEach, type Harness } from '../app/runs/harness.js';
import { answer, turn, warmHarness } from '../app/runs/warm.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

/** The argv of every process under `pid` (this one's own included). */
function commandLines(pid: number): string[][] {
  let argv: string[] = [];
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    // gone meanwhile
  }
  return [argv, ...childrenOf(pid).flatMap(commandLines)];
}

/** The socat processes under this one that join an address of `from` to one of `to`: their argv. */
function bridges(from: RegExp, to: RegExp): string[][] {
  return commandLines(process.pid).filter((argv) => argv[0]?.endsWith('socat') === true && argv.some((arg) => from.test(arg)) && argv.some((arg) => to.test(arg)));
}

const options = (address: string) => address.split(',').slice(1);

describe('the sandbox network bridge (issue 29)', () => {
  it('test_every_tcp_end_of_the_sandbox_network_bridge_has_nagle_off_on_the_host_and_inside_the_sandbox', async () => {
    harness = await warmHarness([answer('Hello.')]);
    const first = await turn(harness, 'hi');
    expect(first.outcome.state).toBe('succeeded');
    // The session is kept: its CLI and the bridges inside its sandbox run.
    const host = bridges(/^UNIX-LISTEN:/, /^TCP:/);
    const inside = bridges(/^TCP[46]?-LISTEN:/, /^UNIX-CONNECT:/);
    // The HTTP proxy's and the SOCKS proxy's, on each side.
    expect(host.length).toBeGreaterThanOrEqual(2);
    expect(inside.length).toBeGreaterThanOrEqual(2);
    for (const argv of [...host, ...inside]) {
      const tcp = argv.filter((arg) => /^TCP[46]?(-LISTEN)?:/.test(arg));
      expect(tcp, argv.join(' ')).toHaveLength(1);
      expect(options(tcp[0]!), argv.join(' ')).toContain('nodelay');
      // The Unix end is left as the runtime made it.
      expect(argv.filter((arg) => arg.startsWith('UNIX-')).flatMap(options), argv.join(' ')).not.toContain('nodelay');
    }
  });
});
