import { describe, expect, it } from 'vitest';
import { toolResultsIn } from '../../fixtures/model-provider/provider.js';
import { processesWith, publishToolAgent } from './agents.js';
import { closeHarnessesAfterEach, payloads, startHarness, types, type Harness } from './harness.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

describe('a tool loop through the broker', () => {
  it('test_calls_the_pinned_upstream_tool_and_hands_its_result_back_to_the_model', async () => {
    harness = await startHarness([
      { blocks: [{ type: 'text', text: 'Let me echo that.' }, { type: 'tool_use', name: 'mcp__ward__fixture__echo', input: { text: 'ping-42' } }] },
      { blocks: [{ type: 'text', text: 'The tool said ping-42.' }] },
    ]);
    const agent = await publishToolAgent(harness);
    expect(agent.version.spec).toMatchObject({ tools: [{ exposedName: 'fixture__echo', schemaHash: expect.stringMatching(/^[0-9a-f]{64}$/) }, { exposedName: 'fixture__slow' }] });

    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'Echo ping-42 please' });
    const outcome = await handle.done;
    expect(outcome.state).toBe('succeeded');

    const events = harness.events(handle.conversationId);
    // The broker's permission check (P4) is journaled from the broker's side: its place relative to tool_call is not fixed.
    expect(types(events).filter((type) => type !== 'permission_decision' && type !== 'assistant_delta')).toEqual(['run_started', 'user_prompt', 'assistant_text', 'tool_call', 'tool_result', 'assistant_text', 'usage', 'run_finished']);
    expect(payloads(events, 'permission_decision')).toEqual([expect.objectContaining({ tool: 'mcp__ward__fixture__echo', decision: 'allow', via: 'broker' })]);
    expect(payloads(events, 'tool_call')[0]).toMatchObject({ tool: 'fixture__echo', arguments: { text: 'ping-42' } });
    expect(payloads(events, 'tool_result')[0]).toMatchObject({ tool: 'fixture__echo', ok: true, bytes: 7, errorCode: null });

    // The upstream's answer went back to the model in the next request.
    const second = harness.provider.conversationRequests()[1]!;
    expect(JSON.stringify(toolResultsIn(second))).toContain('ping-42');
    // The child saw exactly the pinned tools.
    expect(second.body!.tools!.map((tool) => tool.name).sort()).toEqual(['mcp__ward__fixture__echo', 'mcp__ward__fixture__slow']);
    // The upstream server Ward started for the run is gone with it.
    expect(processesWith(agent.marker)).toEqual([]);
  });

  it("test_hands_back_a_call_slower_than_the_brokers_json_window_which_the_cli_receives_as_an_sse_stream", async () => {
    harness = await startHarness([
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 1_500 } }] },
      { blocks: [{ type: 'text', text: 'Done sleeping.' }] },
    ]);
    await publishToolAgent(harness);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'Sleep a little' });
    const outcome = await handle.done;
    expect(outcome.state).toBe('succeeded');
    expect(payloads(harness.events(handle.conversationId), 'tool_result')[0]).toMatchObject({ tool: 'fixture__slow', ok: true });
    expect(JSON.stringify(toolResultsIn(harness.provider.conversationRequests()[1]!))).toContain('slept');
  });
});
