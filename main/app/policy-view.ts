/** The admin policy as people read it: `ward policy show` and the desktop's Policy page (like chrome://policy). */
import type { PolicyView } from '../../common/views.js';
import { describeError } from '../base/errors.js';
import { cliVersionProblem, compilePolicy, describeLocations, readPolicy, systemPolicyLocations, type PolicyReading } from '../policy/policy.js';
import { POLICY_KEYS } from '../policy/schema.js';
import { COMMITTED_PIN } from '../runner/pin.js';

/** Errors include a cliVersions list without the CLI this Ward carries: runs refuse it, so the view says so. */
export function policyView(reading: PolicyReading, pinnedCliVersion: string = COMMITTED_PIN.version): PolicyView {
  const cliProblem = cliVersionProblem(reading, pinnedCliVersion);
  return {
    sources: reading.sources,
    settings: POLICY_KEYS.map((key) => {
      const setting = reading.settings.get(key.key);
      return {
        key: key.key,
        title: key.title,
        description: key.description,
        set: setting !== undefined,
        value: setting === undefined ? null : JSON.stringify(setting.value),
        level: setting?.level ?? null,
        sources: setting?.sources ?? [],
        whenUnset: key.whenUnset,
      };
    }),
    warnings: reading.warnings,
    errors: cliProblem === null ? reading.errors : [...reading.errors, cliProblem],
  };
}

/**
 * `ward policy show`: the policy read afresh from its sources (not through the app), so a broken
 * policy is shown rather than refused; `lookedIn` says where a personal install looked.
 */
export function currentPolicyView(env: NodeJS.ProcessEnv): PolicyView & { lookedIn: string } {
  return { ...policyView(readPolicy(env)), lookedIn: describeLocations(systemPolicyLocations()) };
}

/**
 * Why the admin policy keeps `ward run` from the background service, read afresh (a policy
 * changed since the service started applies to its next client); null when it does not.
 * A policy that cannot be read fails closed: no service.
 */
export function backgroundServiceRefusal(env: NodeJS.ProcessEnv): string | null {
  try {
    const policy = compilePolicy(readPolicy(env));
    return policy?.backgroundService === false ? `${policy.reason} turns the background service off` : null;
  } catch (error) {
    return `the admin policy could not be read: ${describeError(error)}`;
  }
}
