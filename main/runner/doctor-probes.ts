import { describeError } from '../core/errors.js';
import type { DoctorProbe } from '../core/doctor.js';
import { cliVerificationCache, verifyPinnedCli } from './pin.js';
import { runSelfTest } from './self-test.js';

/** R1 as `ward doctor` reports it: path, version and hash against the committed pin. */
export const probePinnedCli: DoctorProbe = async (core) => {
  try {
    const pinned = await verifyPinnedCli({ verifiedCacheFile: cliVerificationCache(core.home) });
    return {
      check: 'pinned CLI',
      status: 'ok',
      detail: `${pinned.version} (${pinned.platformKey}, sha256 ${pinned.sha256.slice(0, 12)}…) at ${pinned.path}`,
      data: { ...pinned },
    };
  } catch (error) {
    return { check: 'pinned CLI', status: 'error', detail: describeError(error) };
  }
};

/** `ward doctor --self-test`: one offline turn with the pinned CLI. */
export const probeSelfTest: DoctorProbe = async () => {
  const result = await runSelfTest();
  return { check: 'CLI self-test', status: result.ok ? 'ok' : 'error', detail: `${result.detail} (${result.durationMs} ms)`, data: { ...result } };
};
