import { runDoctor, type DoctorCheck, type DoctorProbe } from '../../app/doctor.js';
import { managedStore, sandboxModeFor } from '../../app/managed-settings.js';
import { probeKeychain } from '../../credentials/keychain-probe.js';
import { probeClaudeManagedSettings } from '../../policy/claude-managed.js';
import { probePolicy } from '../../policy/doctor-probe.js';
import { COMMITTED_PIN } from '../../runner/pin.js';
import { probePinnedCli, probeSandbox } from '../../runner/doctor-probes.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { EXIT } from '../../base/errors.js';
import { writeJson, writeLine } from '../io.js';


const LABEL: Record<DoctorCheck['status'], string> = { ok: 'ok', warning: 'warn', error: 'FAIL', not_configured: 'not configured' };

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check the data folder, every namespace database, the keychain, the pinned CLI, the admin policy, Claude Code managed settings and the sandbox',
  usage: 'ward doctor [--self-test] [--json]',
  async run(args, { io, app }) {
    const { values } = parseCommandArgs(this, args, { json: COMMON_OPTIONS.json, 'self-test': { type: 'boolean', default: false } }, false);
    // --self-test runs the pinned CLI once against a built-in offline endpoint.
    // A broken policy is the policy check's error; the other checks then go by the environment alone.
    const policy = () => {
      try {
        return app().policy;
      } catch {
        return null;
      }
    };
    const probes: DoctorProbe[] = [
      (core) => probeKeychain(core, managedStore(policy())),
      probePinnedCli,
      probePolicy(io.env, COMMITTED_PIN.version),
      probeClaudeManagedSettings(),
      probeSandbox(() => sandboxModeFor(policy(), io.env)),
    ];
    const checks = await runDoctor(app().folder, values['self-test'] ? [...probes, await selfTestProbe()] : probes);
    for (const check of checks) {
      if (values.json) writeJson(io.stdout, check);
      else writeLine(io.stdout, `${LABEL[check.status].padEnd(14)} ${check.check.padEnd(22)} ${check.detail}`);
    }
    return checks.some((check) => check.status === 'error') ? EXIT.failed : EXIT.ok;
  },
};

/** Loaded only for --self-test: it brings the broker and the MCP SDK, which plain doctor never needs. */
async function selfTestProbe(): Promise<DoctorProbe> {
  return (await import('../../app/self-test.js')).probeSelfTest;
}
