/**
 * Facts about the pinned CLI (2.1.328) read from stdin as stream-json, verified against the real
 * binary: what Ward's warm session per conversation builds on. One process answers an
 * `initialize` control request, takes one `user` message per turn and ends each with a `result`
 * line, keeps the conversation's context between turns, answers an `interrupt` control request
 * by ending the turn (`error_during_execution`) while staying alive, and exits 0 when its stdin
 * closes. If a CLI upgrade changes any of it, this test says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider } from '../fixtures/model-provider/provider.js';
import { isResult, responseTo, startStreamJsonCli, userLine as user } from '../support/stream-json-cli.js';
import { until } from '../support/wait.js';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The pinned CLI with Ward's flags for a new session, reading stream-json from stdin (no MCP server, no one answering permission questions). */
function startCli(provider: Parameters<typeof startStreamJsonCli>[0]) {
  const cli = startStreamJsonCli(provider);
  closers.push(() => void cli.child.kill('SIGKILL'));
  return cli;
}

describe('the pinned CLI reading turns from stdin (stream-json input)', () => {
  it('test_one_process_answers_initialize_keeps_context_across_turns_survives_an_interrupt_and_exits_0_when_stdin_closes', async () => {
    const provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'First answer, about Lisbon.' }] }]);
    closers.push(() => provider.close());
    const cli = startCli(provider);

    cli.send({ type: 'control_request', request_id: 'init-1', request: { subtype: 'initialize' } });
    expect(await cli.next(responseTo('init-1'))).toMatchObject({ response: { subtype: 'success', request_id: 'init-1' } });

    cli.send(user('Tell me about Lisbon.'));
    expect(await cli.next(isResult)).toMatchObject({ subtype: 'success', result: 'First answer, about Lisbon.' });

    // A turn whose model call never finishes, interrupted: the turn ends, the process stays.
    provider.push({ kind: 'hang', blocks: [{ type: 'text', text: 'Thinking' }] });
    cli.send(user('And Porto?'));
    await until(() => provider.conversationRequests().length === 2, 'the second turn to reach the provider', 30_000);
    cli.send({ type: 'control_request', request_id: 'stop-1', request: { subtype: 'interrupt' } });
    expect(await cli.next(responseTo('stop-1'))).toMatchObject({ response: { subtype: 'success', request_id: 'stop-1' } });
    expect(await cli.next(isResult)).toMatchObject({ subtype: 'error_during_execution' });
    expect(cli.child.exitCode).toBeNull();

    provider.push({ blocks: [{ type: 'text', text: 'Third answer.' }] });
    cli.send(user('Back to Lisbon: one word?'));
    expect(await cli.next(isResult)).toMatchObject({ subtype: 'success', result: 'Third answer.' });
    // The same process sent the earlier turn's answer with the new prompt: the context is kept.
    const third = provider.conversationRequests()[2]!.rawBody;
    expect(third).toContain('First answer, about Lisbon.');
    expect(third).toContain('Back to Lisbon: one word?');

    const exited = new Promise<number | null>((resolve) => cli.child.once('exit', (code) => resolve(code)));
    cli.child.stdin.end();
    await expect(exited).resolves.toBe(0);
  });
});
