/**
 * `ward doctor --self-test`: one real turn through the same composition as `ward run` (WardApp,
 * RunService, the broker, the locked-down argv and environment, the OS sandbox when runs have
 * one) in a scratch data folder, against the built-in offline endpoint. It passes when the
 * turn succeeds and the journal holds what Ward parsed from the CLI's stream-json: the answer,
 * no stray output, one model call; then a second turn of the same conversation must run in the
 * same CLI process, as the desktop's warm sessions do (stream-json input, issue 19). What an IT
 * admin runs after an upgrade.
 */
import { readJournalEvent } from '../../common/events.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeError } from '../base/errors.js';
import type { DoctorProbe } from '../base/doctor-check.js';
import { parseNamespace } from '../namespaces/namespace.js';
import { INHERITED_ENV } from '../runner/env.js';
import { SELF_TEST_ANSWER, startOfflineProvider } from '../runner/offline-provider.js';
import { verifyPinnedCli } from '../runner/pin.js';
import { SandboxEngine } from '../sandbox/engine.js';
import { loadPolicy, type AdminPolicy } from '../policy/policy.js';
import { sandboxModeFor } from './managed-settings.js';
import { WardApp } from './ward-app.js';

export interface SelfTestResult {
  readonly ok: boolean;
  /** What failed, or a one-line summary of what passed. */
  readonly detail: string;
  readonly version: string | null;
  /** Whether the CLI ran inside the OS sandbox, as `ward run` would run it. */
  readonly sandboxed: boolean;
  readonly durationMs: number;
}

const SELF_TEST_TIMEOUT_MS = 60_000;
/** Not a secret: the offline endpoint accepts anything. */
const OFFLINE_KEY = 'ward-self-test-offline';

/** The admin policy for the sandbox floor; a broken one is the admin policy check's to report. */
function validPolicy(env: NodeJS.ProcessEnv): AdminPolicy | null {
  try {
    return loadPolicy(env);
  } catch {
    return null;
  }
}

export async function runSelfTest(env: NodeJS.ProcessEnv = process.env): Promise<SelfTestResult> {
  const started = performance.now();
  let version: string | null = null;
  let sandboxed = false;
  const done = (ok: boolean, detail: string): SelfTestResult => ({ ok, detail, version, sandboxed, durationMs: Math.round(performance.now() - started) });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-self-test-'));
  const provider = await startOfflineProvider();
  // Ward's own environment for the child's allowlist and WARD_SANDBOX (as the policy raises it, as for runs); the offline endpoint instead of any configured one.
  const selfEnv: NodeJS.ProcessEnv = { ...pick(env, [...INHERITED_ENV, 'WARD_SANDBOX']), WARD_MODEL_BASE_URL: provider.url };
  const sandbox = new SandboxEngine(sandboxModeFor(validPolicy(env), selfEnv));
  const app = new WardApp({
    home: path.join(scratch, 'home'),
    env: selfEnv,
    // The self-test checks the CLI protocol; the admin policy is reported by its own doctor check.
    policy: null,
    run: { tmpRoot: scratch, turnTimeoutMs: SELF_TEST_TIMEOUT_MS, sandbox, warmSessions: true, resolveCredential: () => ({ kind: 'api-key', value: OFFLINE_KEY }) },
  });
  try {
    version = (await verifyPinnedCli()).version;
    const status = await sandbox.status();
    const ns = parseNamespace('default');
    const runs = await app.runs();
    // As `ward run` does: the preflight's refusals (pin, policy, credential) before anything is created.
    const handle = await runs.start({ namespace: ns, prompt: 'Ward self-test: reply with one sentence.' });
    const outcome = await handle.done;
    // Read by their schemas, as every reader of the journal does.
    const events = [...app.folder.store(ns).journal.read(handle.conversationId)].map((event) => readJournalEvent(event.type, event.payload));
    const started = events.find((event) => event.type === 'run_started');
    sandboxed = started?.type === 'run_started' && started.payload.sandboxed;
    if (outcome.state !== 'succeeded') return done(false, `the turn ${outcome.state}: ${outcome.reason ?? 'no reason given'}`);
    const text = events.map((event) => (event.type === 'assistant_text' ? event.payload.text : '')).join('');
    if (!text.includes(SELF_TEST_ANSWER)) return done(false, "no assistant text with the endpoint's answer");
    const stray = events.find((event) => event.type === 'diagnostic');
    if (stray?.type === 'diagnostic') return done(false, `unexpected stdout: ${stray.payload.detail}`);
    if (provider.streamingCalls() !== 1) return done(false, `expected one model call, saw ${provider.streamingCalls()}`);
    const followUp = await runs.start({ namespace: ns, conversationId: handle.conversationId, prompt: 'Ward self-test: once more.' });
    const second = await followUp.done;
    if (second.state !== 'succeeded') return done(false, `the follow-up turn (warm session) ${second.state}: ${second.reason ?? 'no reason given'}`);
    if (followUp.childPid() !== handle.childPid()) return done(false, 'the follow-up turn started a new CLI process: the warm session (stream-json input) did not hold');
    if (provider.streamingCalls() !== 2) return done(false, `expected a second model call for the follow-up turn, saw ${provider.streamingCalls()}`);
    const confinement = sandboxed ? 'inside the OS sandbox' : status.detail;
    return done(true, `CLI ${version}: system/init, assistant text and a success result parsed; a follow-up turn in the same process (warm session); offline endpoint, no network; ${confinement}`);
  } catch (error) {
    return done(false, describeError(error));
  } finally {
    await app.close();
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function pick(env: NodeJS.ProcessEnv, names: readonly string[]): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const name of names) if (env[name] !== undefined) out[name] = env[name];
  return out;
}

/** `ward doctor --self-test`: one offline turn with the pinned CLI. */
export const probeSelfTest: DoctorProbe = async () => {
  const result = await runSelfTest();
  return { check: 'CLI self-test', status: result.ok ? 'ok' : 'error', detail: `${result.detail} (${result.durationMs} ms)`, data: { ...result } };
};
