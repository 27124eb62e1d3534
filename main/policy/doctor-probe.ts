import type { DoctorCheck, DoctorProbe } from '../base/doctor-check.js';
import { describeError } from '../base/errors.js';
import { loadPolicy, systemPolicyPath } from './policy.js';

/** `ward doctor`: is there an admin policy, and does it parse? A broken one fails, as Ward refuses to run. */
export function probePolicy(env: NodeJS.ProcessEnv): DoctorProbe {
  return async (): Promise<DoctorCheck> => {
    try {
      const policy = loadPolicy(env);
      if (policy === null) return { check: 'admin policy', status: 'not_configured', detail: `no policy at ${systemPolicyPath(env)} (a personal install)` };
      const capped = Object.keys(policy.caps);
      const parts = [
        policy.forbid.size > 0 ? `forbids ${[...policy.forbid].join(', ')}` : null,
        capped.length > 0 ? `caps ${capped.join(', ')}` : null,
        policy.connections !== null ? `${policy.connections.length} connection(s) allowed` : null,
        policy.providers !== null ? `${policy.providers.length} provider(s) allowed` : null,
        policy.cliVersions !== null ? `CLI ${policy.cliVersions.join(', ')}` : null,
        policy.namespace !== null ? `namespace ${policy.namespace}` : null,
      ].filter((part): part is string => part !== null);
      return { check: 'admin policy', status: 'ok', detail: `${policy.file}: ${parts.join('; ') || 'no restrictions'}` };
    } catch (error) {
      return { check: 'admin policy', status: 'error', detail: describeError(error) };
    }
  };
}
