/**
 * `ward doctor --self-test`: runs the pinned CLI once, exactly as a run would (locked-down argv,
 * allowlisted environment, private config dir, the real broker, the OS sandbox when runs have
 * one), against the built-in offline endpoint, and checks that its stream-json output still has
 * the shape Ward parses:
 * system/init (matching what was configured), assistant text, and a success result.
 * What an IT admin runs after an upgrade.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../broker/broker.js';
import { describeError } from '../base/errors.js';
import type { DoctorProbe } from '../base/doctor-check.js';
import { buildCliArgs } from '../runner/argv.js';
import { CliProcess } from '../runner/child.js';
import { buildChildEnv } from '../runner/env.js';
import { checkInit } from '../runner/init-check.js';
import { SELF_TEST_ANSWER, startOfflineProvider } from '../runner/offline-provider.js';
import { verifyPinnedCli } from '../runner/pin.js';
import { createRunDir } from '../runner/run-dir.js';
import { sandboxLaunch, sandboxState } from '../runner/sandbox.js';
import type { CliMessage } from '../runner/stream-parser.js';

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

export async function runSelfTest(env: NodeJS.ProcessEnv = process.env): Promise<SelfTestResult> {
  const started = performance.now();
  let version: string | null = null;
  let sandboxed = false;
  const done = (ok: boolean, detail: string): SelfTestResult => ({ ok, detail, version, sandboxed, durationMs: Math.round(performance.now() - started) });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-self-test-'));
  const provider = await startOfflineProvider();
  const broker = await Broker.start();
  const runId = `self-test-${randomUUID()}`;
  const registration = broker.register({ runId, tools: [], upstreams: { callTool: async () => ({ ok: false, errorCode: 'refused', message: 'no tools' }) }, isAcceptingCalls: () => true, onEvent: () => undefined });
  let child: CliProcess | undefined;
  try {
    const pinned = await verifyPinnedCli();
    version = pinned.version;
    const runDir = createRunDir({ brokerUrl: registration.url, capability: registration.capability, instructions: 'Answer briefly.', tmpRoot: scratch });
    const sessionId = randomUUID();
    const messages: CliMessage[] = [];
    const workspace = path.join(scratch, 'workspace');
    const configDir = path.join(scratch, 'claude');
    fs.mkdirSync(workspace, { mode: 0o700 });
    fs.mkdirSync(configDir, { mode: 0o700 });
    const sandbox = sandboxState(env);
    const launch = sandboxLaunch(
      sandbox,
      {
        binary: pinned.path,
        args: buildCliArgs({ sessionId, resume: false, mcpConfigPath: runDir.mcpConfigPath, instructionsPath: runDir.instructionsPath, model: 'claude-sonnet-4-5', pinnedTools: [] }),
        env: buildChildEnv({ inherited: env, baseUrl: provider.url, credential: { kind: 'api_key', value: 'ward-self-test-offline' }, configDir }),
        cwd: workspace,
        prompt: 'Ward self-test: reply with one sentence.',
      },
      { writable: [workspace, configDir], readOnly: [runDir.dir] },
    );
    sandboxed = sandbox.bwrap !== null;
    child = new CliProcess(launch, (batch) => messages.push(...batch));
    const timer = setTimeout(() => child?.killGroup(), SELF_TEST_TIMEOUT_MS);
    const exit = await child.exited;
    clearTimeout(timer);

    const init = messages.find((message) => message.kind === 'init');
    if (init === undefined) return done(false, `no system/init line (the CLI ${exit.signal ?? `exited ${String(exit.code)}`}${exit.stderrTail ? `: ${exit.stderrTail.split('\n')[0]}` : ''})`);
    const problem = checkInit(init, { sessionId, tools: [] });
    if (problem !== null) return done(false, `system/init: ${problem}`);
    if (init.version !== pinned.version) return done(false, `system/init reports CLI ${init.version}, pinned ${pinned.version}`);
    const text = messages.filter((message) => message.kind === 'assistant_text').map((message) => message.text).join('');
    if (!text.includes(SELF_TEST_ANSWER)) return done(false, 'no assistant text with the endpoint\'s answer');
    const result = messages.find((message) => message.kind === 'result');
    if (result === undefined) return done(false, 'no terminal result line');
    if (result.subtype !== 'success' || result.isError) return done(false, `result is ${result.subtype} (is_error ${String(result.isError)})`);
    const diagnostics = messages.filter((message) => message.kind === 'diagnostic');
    if (diagnostics.length > 0) return done(false, `unexpected stdout: ${diagnostics[0]!.kind === 'diagnostic' ? diagnostics[0]!.detail : ''}`);
    if (provider.streamingCalls() !== 1) return done(false, `expected one model call, saw ${provider.streamingCalls()}`);
    const confinement = sandboxed ? 'inside the OS sandbox' : sandbox.detail;
    return done(true, `CLI ${pinned.version}: system/init, assistant text and a success result parsed; offline endpoint, no network; ${confinement}`);
  } catch (error) {
    return done(false, describeError(error));
  } finally {
    child?.killGroup();
    await registration.close();
    await broker.close();
    await provider.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** `ward doctor --self-test`: one offline turn with the pinned CLI. */
export const probeSelfTest: DoctorProbe = async () => {
  const result = await runSelfTest();
  return { check: 'CLI self-test', status: result.ok ? 'ok' : 'error', detail: `${result.detail} (${result.durationMs} ms)`, data: { ...result } };
};
