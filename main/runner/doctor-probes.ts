import { describeError } from '../base/errors.js';
import type { DoctorProbe } from '../base/doctor-check.js';
import { cliVerificationCache, verifyPinnedCli } from './pin.js';
import { SandboxEngine, type SandboxMode } from '../sandbox/engine.js';

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

/**
 * What confines this machine's runs, part by part (files, network, model key); `require` without
 * a sandbox fails. `mode` is WARD_SANDBOX as the admin policy allows (it may throw: reported).
 */
export function probeSandbox(mode: () => SandboxMode): DoctorProbe {
  return async () => {
    try {
      const engine = new SandboxEngine(mode());
      const state = await engine.status();
      const status = state.confined ? 'ok' : state.mode === 'require' ? 'error' : state.mode === 'off' ? 'warning' : process.platform === 'linux' ? 'warning' : 'not_configured';
      const detail = state.mode === 'require' && !state.confined ? `${state.detail}; the sandbox is required (WARD_SANDBOX or the admin policy), so ward run refuses to start runs` : state.detail;
      const parts = {
        files: state.confined ? 'granted paths only (no home folder, no Ward data)' : 'not confined',
        network: state.confined ? 'only through Ward: granted hosts, the broker, the model gateway' : 'not confined (the host network)',
        modelKey: 'never in the child: it holds a per-run gateway capability',
      };
      await engine.close();
      return { check: 'sandbox', status, detail, data: { mode: state.mode, sandboxed: state.confined, ...parts } };
    } catch (error) {
      return { check: 'sandbox', status: 'error', detail: describeError(error) };
    }
  };
}
