import { describeError } from '../base/errors.js';
import type { DoctorProbe } from '../base/doctor-check.js';
import { cliVerificationCache, verifyPinnedCli } from './pin.js';
import { sandboxState } from './sandbox.js';

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

/** Whether `ward run` sandboxes the CLI (WARD_SANDBOX and a probe of bwrap); `require` without a sandbox fails. */
export function probeSandbox(env: NodeJS.ProcessEnv): DoctorProbe {
  return async () => {
    try {
      const state = sandboxState(env);
      const status = state.bwrap !== null ? 'ok' : state.mode === 'require' ? 'error' : state.mode === 'off' ? 'warning' : process.platform === 'linux' ? 'warning' : 'not_configured';
      const detail = state.mode === 'require' && state.bwrap === null ? `${state.detail}; WARD_SANDBOX=require, so ward run refuses to start runs` : state.detail;
      return { check: 'sandbox', status, detail, data: { mode: state.mode, sandboxed: state.bwrap !== null, bwrap: state.bwrap } };
    } catch (error) {
      return { check: 'sandbox', status: 'error', detail: describeError(error) };
    }
  };
}
