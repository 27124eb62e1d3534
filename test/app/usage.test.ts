/** What each run cost: per turn as the growth of the CLI's session total (for models the CLI has prices for), per conversation and per day; totals labelled as totals. */
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { UsageService } from '../../main/app/usage.js';
import { appendTurn } from '../export/support.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const RUN = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
const tokens = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheCreation: 0 });

describe('usage per turn', () => {
  it('test_a_turn_costs_the_growth_of_the_session_total_tokens_come_from_the_gateway_and_count_tokens_calls_do_not_count', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    appendTurn(store, conversation.id, RUN(1), 'one', 0.002);
    appendTurn(store, conversation.id, RUN(2), 'two', 0.005);
    // A failed turn: the gateway saw its calls, the CLI reported nothing.
    store.journal.appendMany(
      conversation.id,
      [
        journalEvent('model_call', { path: '/v1/messages/count_tokens', status: 200, durationMs: 3, problem: null, usage: { inputTokens: 999, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 } }),
        journalEvent('model_call', { path: '/v1/messages', status: 200, durationMs: 3, problem: null, usage: { inputTokens: 50, outputTokens: 7, cacheReadTokens: 10, cacheCreationTokens: 0 } }),
        journalEvent('run_finished', { state: 'failed', reason: 'the CLI exited' }),
      ].map((event) => ({ ...event, runId: RUN(3) })),
    );
    // A new CLI session starts its total again.
    appendTurn(store, conversation.id, RUN(4), 'four', 0.001);
    const turns = new UsageService().turns(store);
    expect(turns.map((turn) => [turn.runId, turn.tokens, turn.tokensFrom, turn.costUsd, turn.sessionTotalUsd])).toEqual([
      [RUN(1), tokens(120, 30), 'gateway', 0.002, 0.002],
      [RUN(2), tokens(120, 30), 'gateway', 0.003, 0.005],
      [RUN(3), { input: 50, output: 7, cacheRead: 10, cacheCreation: 0 }, 'gateway', null, null],
      [RUN(4), tokens(120, 30), 'gateway', 0.001, 0.001],
    ]);
    expect(new UsageService().byConversation(store).get(conversation.id)).toEqual({ turns: 4, tokens: { input: 410, output: 97, cacheRead: 10, cacheCreation: 0 }, costUsd: 0.006, unpricedTurns: 1 });
    core.close();
  });

  it('test_ward_replay_shows_each_turns_own_cost_beside_its_tokens_and_the_total_once_labelled_total', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    appendTurn(store, conversation.id, RUN(1), 'one', 0.002);
    appendTurn(store, conversation.id, RUN(2), 'two', 0.005);
    core.close();
    const env = { WARD_HOME: home };
    const replay = (await ward(['replay', conversation.id], { env })).stdout;
    const usageLines = replay.split('\n').filter((line) => line.includes(' usage '));
    // One number per turn line: the turn's own cost; the total once, at the end, called one.
    expect(usageLines.map((line) => line.split('  ')[1])).toEqual(['turn: 120 in / 30 out tokens, $0.0020', 'turn: 120 in / 30 out tokens, $0.0030']);
    expect(replay.endsWith('\nTotal: 2 turns, 240 in · 60 out tokens · $0.0050\n')).toBe(true);
    // From a cursor the turn before is not read: this turn's cost is unknown, and said to be.
    const fromCursor = (await ward(['replay', conversation.id, '--from', '9'], { env })).stdout;
    expect(fromCursor).toContain('usage  turn: 120 in / 30 out tokens, cost unknown\n');
    expect(fromCursor.endsWith('\nTotal of the turns shown: 1 turn, 120 in · 30 out tokens · cost unknown for 1 turn\n')).toBe(true);

    const daily = await ward(['usage', '--json'], { env });
    const rows = daily.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(rows).toEqual([
      { day: new Date().toISOString().slice(0, 10), turns: 2, tokens: tokens(240, 60), costUsd: 0.005, unpricedTurns: 0 },
      { day: 'total', turns: 2, tokens: tokens(240, 60), costUsd: 0.005, unpricedTurns: 0 },
    ]);
    expect((await ward(['usage', '--since', '2999-01-01'], { env })).stdout).toBe('total          0 turns  0 in · 0 out tokens\n');
    expect((await ward(['usage', '--since', 'yesterday'], { env })).code).toBe(2);
    const listed = await ward(['conversations'], { env });
    expect(listed.stdout).toMatch(/16 events\s+300 tokens\s+\$0\.0050 {2}first chat/);
    // A header names the columns, each heading ending where its column's values end.
    const [header, row] = listed.stdout.split('\n');
    expect(header).toMatch(/^ID {36}CREATED \(UTC\) {5}AGENT {11} +EVENTS +TOKENS +COST {2}TITLE$/);
    for (const heading of ['EVENTS', 'TOKENS', 'COST']) {
      const end = header!.indexOf(heading) + heading.length;
      const value = { EVENTS: 'events', TOKENS: 'tokens', COST: '0050' }[heading]!;
      expect(row!.indexOf(value) + value.length, heading).toBe(end);
    }
  });

  it('test_ward_usage_runs_lists_the_turns_of_every_conversation_in_the_order_they_happened', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    const other = store.conversations.create({ agentId: conversation.agentId, agentVersion: 1, title: 'other chat' });
    // Journal order is by conversation; make the conversation listed last the one that started first.
    const [early, late] = conversation.id > other.id ? [conversation, other] : [other, conversation];
    const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
    appendTurn(store, early.id, RUN(1), 'one', 0.001);
    await pause();
    appendTurn(store, late.id, RUN(2), 'two', 0.002);
    await pause();
    appendTurn(store, early.id, RUN(3), 'three', 0.003);
    core.close();
    const listed = await ward(['usage', '--runs', '--json'], { env: { WARD_HOME: home } });
    expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { runId: string }).runId)).toEqual([RUN(1), RUN(2), RUN(3)]);
  });

  it('test_a_model_the_pinned_cli_has_no_prices_for_shows_tokens_and_cost_unknown_everywhere_and_totals_say_what_they_leave_out', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    appendTurn(store, conversation.id, RUN(1), 'one', 0.002);
    // The CLI prices a model outside its catalog at a default tier: its total grew by 2.658, a guess.
    appendTurn(store, conversation.id, RUN(2), 'two', 2.66, 'my-corp-model');
    appendTurn(store, conversation.id, RUN(3), 'three', 2.661, 'claude-opus-4-5-20251101');
    core.close();
    const env = { WARD_HOME: home };
    const replay = (await ward(['replay', conversation.id], { env })).stdout;
    expect(replay).not.toContain('2.65');
    expect(replay.split('\n').filter((line) => line.includes(' usage ')).map((line) => line.split('  ')[1])).toEqual([
      'turn: 120 in / 30 out tokens, $0.0020',
      'turn: 120 in / 30 out tokens, cost unknown',
      'turn: 120 in / 30 out tokens, $0.0010',
    ]);
    expect(replay.endsWith('\nTotal: 3 turns, 360 in · 90 out tokens · $0.0030 + cost unknown for 1 turn\n')).toBe(true);
    const usage = await ward(['usage'], { env });
    expect(usage.stdout.split('\n').at(-2)).toBe('total          3 turns  360 in · 90 out tokens · $0.0030 + cost unknown for 1 turn');
    const runs = (await ward(['usage', '--runs'], { env })).stdout.trim().split('\n');
    expect(runs.map((line) => line.slice(line.indexOf('tokens')))).toEqual(['tokens · $0.0020', 'tokens · cost unknown', 'tokens · $0.0010']);
    expect((await ward(['conversations'], { env })).stdout).toMatch(/\$0\.0030 \+ cost unknown for 1 turn {2}first chat/);
  });
});
