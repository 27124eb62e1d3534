/**
 * Issue 28's canary on a real run: the pinned CLI, driven by the scripted model, greps a
 * workspace whose .env is read-denied inside the sandbox; that run's journal, sent through the
 * OTLP sink in both content modes, reaches the receiver without the denied file's content or
 * the model key (nothing redacts here: they must not be in the journal at all).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchSender } from '../../main/audit/delivery.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import { closeHarnessesAfterEach, CANARY_KEY, startHarness } from '../app/runs/harness.js';
import { bash, DONE } from '../sandbox/steps.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { makeTestCa } from '../support/rsyslog.js';
import { tempDir } from '../support/temp.js';

closeHarnessesAfterEach();

const DENIED_CANARY = 'env-canary-otlp-8c1d';
const LIMITS = { connectMs: 2_000, writeMs: 5_000, closeMs: 2_000 };

describe('audit sink: OTLP after a real sandboxed run', () => {
  it('test_a_read_denied_file_and_the_model_key_never_reach_the_otlp_receiver_in_either_content_mode', async () => {
    const workspace = path.join(fs.realpathSync(tempDir('ward-otlp-run-')), 'workspace');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, '.env'), `API_TOKEN=${DENIED_CANARY}\n`);
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'plain notes\n');
    const harness = await startHarness([bash(`grep -r . ${workspace}`), DONE]);
    const permissions = parsePermissionFlags(['--allow-run=grep', `--allow-read=${workspace}`, `--deny-read=${path.join(workspace, '.env')}`], workspace);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'grep', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');
    const events = harness.core.store(harness.ns).audit.pending(10_000);
    expect(events.map((event) => event.type)).toContain('tool_result');

    const ca = makeTestCa(tempDir('ward-otlp-ca-'));
    const receiver = await new OtlpReceiver(ca).start();
    try {
      const endpoint = `https://localhost:${receiver.port}/v1/logs`;
      const context = { hostname: 'laptop', user: 'ana', namespace: 'default', procId: '1', wardVersion: '0.0.0' };
      for (const content of ['metadata', 'full'] as const) {
        await batchSender({ otlp: { endpoint, caFile: ca.caFile } }, content, LIMITS)(events, context, [], new AbortController().signal);
      }
      expect(receiver.requests.map((request) => request.records.length)).toEqual([events.length, events.length]);
      const full = JSON.stringify(receiver.requests[1]!.records.map((record) => record.body));
      // The run's output did reach the sink in full mode; the denied file's did not, nor the key.
      expect(full).toContain('plain notes');
      const everything = receiver.requests.map((request) => `${JSON.stringify(request.headers)}${request.raw.toString('latin1')}`).join('\n');
      expect(everything).not.toContain(DENIED_CANARY);
      expect(everything).not.toContain(CANARY_KEY);
    } finally {
      await receiver.stop();
    }
  });
});
