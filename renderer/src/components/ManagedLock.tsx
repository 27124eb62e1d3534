/** The admin policy in the window: what it sets, and the lock every setting it manages shows. */
import { useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { PolicySettingView, PolicyView } from '../../../common/views.js';
import { unwrap } from '../api.js';

/** The policy this Ward started with (main reads it once), read again when `fresh` turns true; null until it arrives. */
export function usePolicy(api: WardApi, fresh = false): PolicyView | null {
  const [policy, setPolicy] = useState<PolicyView | null>(null);
  useEffect(() => {
    unwrap(api.policy.get({}))
      .then(setPolicy)
      .catch(() => setPolicy(null));
  }, [api, fresh]);
  return policy;
}

export function policySetting(policy: PolicyView | null, key: string): PolicySettingView | undefined {
  const setting = policy?.settings.find((item) => item.key === key);
  return setting?.set ? setting : undefined;
}

/** A padlock drawn inline (no icon font or emoji font needed), hidden from screen readers: the text says it. */
export function LockIcon() {
  return (
    <svg className="lock-icon" aria-hidden="true" width="10" height="12" viewBox="0 0 10 12">
      <path d="M2.5 5V3.5a2.5 2.5 0 0 1 5 0V5" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <rect x="0.5" y="5" width="9" height="6.5" rx="1" fill="currentColor" />
    </svg>
  );
}

/** A list setting's entries as text ("a, b"). */
export function listed(setting: PolicySettingView | undefined): string {
  return setting?.value == null ? '' : (JSON.parse(setting.value) as string[]).join(', ');
}

/**
 * "Managed by your organization" and where it comes from. Mandatory settings cannot be changed
 * (their control is disabled); a recommended one is a default the person may change.
 */
export function ManagedLock({ setting, what }: { readonly setting: PolicySettingView | undefined; readonly what?: string }) {
  if (setting === undefined) return null;
  const recommended = setting.level === 'recommended';
  return (
    <p className="managed-lock" role="note" data-testid={`managed-${setting.key}`}>
      <LockIcon /> {recommended ? 'Recommended by your organization (a default you may change)' : 'Managed by your organization'}
      {what === undefined ? '' : `: ${what}`} · {setting.sources.join(', ')}
    </p>
  );
}
