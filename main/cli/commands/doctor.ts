import { runDoctor, type DoctorCheck, type DoctorProbe } from '../../core/doctor.js';
import { probeKeychain } from '../../credentials/keychain-probe.js';
import { COMMON_OPTIONS, parseCommandArgs, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { writeJson, writeLine } from '../io.js';

const PROBES: readonly DoctorProbe[] = [
  probeKeychain,
  async () => ({ check: 'pinned CLI', status: 'not_configured', detail: 'the run loop is not built yet' }),
];

const LABEL: Record<DoctorCheck['status'], string> = { ok: 'ok', warning: 'warn', error: 'FAIL', not_configured: 'not configured' };

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check the data folder, every namespace database, the keychain and the pinned CLI',
  usage: 'ward doctor [--json]',
  async run(args, { io, core }) {
    const { values } = parseCommandArgs(this, args, { json: COMMON_OPTIONS.json }, false);
    const checks = await runDoctor(core(), PROBES);
    for (const check of checks) {
      if (values.json) writeJson(io.stdout, check);
      else writeLine(io.stdout, `${LABEL[check.status].padEnd(14)} ${check.check.padEnd(22)} ${check.detail}`);
    }
    return checks.some((check) => check.status === 'error') ? EXIT.failed : EXIT.ok;
  },
};
