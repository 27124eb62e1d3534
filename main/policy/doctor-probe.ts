import type { DoctorCheck, DoctorProbe } from '../base/doctor-check.js';
import { cliVersionProblem, describeLocations, readPolicy, systemPolicyLocations, type PolicyLocations } from './policy.js';

/**
 * `ward doctor`: is there an admin policy, does it parse, and does it allow the CLI this Ward
 * carries? A broken one fails, as Ward refuses to run; unknown keys are warnings.
 */
export function probePolicy(env: NodeJS.ProcessEnv, pinnedCliVersion: string, platform: NodeJS.Platform = process.platform, locations: PolicyLocations = systemPolicyLocations(platform)): DoctorProbe {
  return async (): Promise<DoctorCheck> => {
    const reading = readPolicy(env, platform, locations);
    const check = 'admin policy';
    if (reading.errors.length > 0) return { check, status: 'error', detail: `${reading.errors.join('; ')}; Ward refuses to run until it is fixed` };
    if (reading.sources.length === 0) return { check, status: 'not_configured', detail: `no policy at ${describeLocations(locations)} (a personal install)` };
    const cliProblem = cliVersionProblem(reading, pinnedCliVersion);
    if (cliProblem !== null) return { check, status: 'error', detail: cliProblem };
    const settings = [...reading.settings.values()];
    const keys = (level: string) => settings.filter((setting) => setting.level === level).map((setting) => setting.key);
    const parts = [`${keys('mandatory').length} mandatory (${keys('mandatory').join(', ') || 'none'})`, ...(keys('recommended').length > 0 ? [`${keys('recommended').length} recommended (${keys('recommended').join(', ')})`] : [])];
    const detail = `${reading.sources.join(', ')}: ${parts.join(', ')}; "ward policy show" lists every key${reading.warnings.length > 0 ? `; ${reading.warnings.join('; ')}` : ''}`;
    return { check, status: reading.warnings.length > 0 ? 'warning' : 'ok', detail };
  };
}
