/** The admin policy as people read it: `ward policy show` and the desktop's Policy page (like chrome://policy). */
import type { PolicyView } from '../../preload/contract.js';
import type { PolicyReading } from '../policy/policy.js';
import { POLICY_KEYS } from '../policy/schema.js';

export function policyView(reading: PolicyReading): PolicyView {
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
    errors: reading.errors,
  };
}
