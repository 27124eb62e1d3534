/**
 * The admin policy's say over settings other parts own (P5): which credential store, which
 * sandbox mode, how long an approval waits. A mandatory value wins over Ward's environment and
 * the data folder's settings and is a floor they cannot lower; a recommended one is only a default.
 */
import type { ManagedStore } from '../credentials/open-store.js';
import { policySetting, type AdminPolicy } from '../policy/policy.js';
import { DEFAULT_PROMPT_TIMEOUT_MS } from '../permissions/run-permissions.js';
import { parseSandboxMode, type SandboxMode } from '../sandbox/engine.js';

type StoreKind = NonNullable<ManagedStore['forced']>;

export function managedStore(policy: AdminPolicy | null): ManagedStore | undefined {
  if (policy === null) return undefined;
  const store = policySetting<StoreKind>(policy, 'credentialStore');
  return {
    ...(store?.level === 'mandatory' ? { forced: store.value } : {}),
    ...(store?.level === 'recommended' ? { preferred: store.value } : {}),
    fileAllowed: policy.allowFileCredentialStore,
    by: policy.reason,
  };
}

const SANDBOX_ORDER: readonly SandboxMode[] = ['off', 'auto', 'require'];

/** WARD_SANDBOX, raised to the policy's mandatory mode; the policy's recommended mode when WARD_SANDBOX is unset. */
export function sandboxModeFor(policy: AdminPolicy | null, env: NodeJS.ProcessEnv): SandboxMode {
  const requested = env.WARD_SANDBOX === undefined || env.WARD_SANDBOX === '' ? undefined : parseSandboxMode(env.WARD_SANDBOX);
  const setting = policySetting<SandboxMode>(policy, 'sandbox');
  if (setting === null) return requested ?? 'auto';
  if (setting.level === 'recommended') return requested ?? setting.value;
  return SANDBOX_ORDER.indexOf(requested ?? 'off') > SANDBOX_ORDER.indexOf(setting.value) ? requested! : setting.value;
}

/** The approval timeout: the policy's mandatory value, else the host's, else the policy's recommended one, else 2 minutes. */
export function approvalTimeoutMs(policy: AdminPolicy | null, host: number | undefined): number {
  const setting = policySetting<number>(policy, 'approvalTimeoutSeconds');
  if (setting?.level === 'mandatory') return setting.value * 1000;
  return host ?? (setting === null ? DEFAULT_PROMPT_TIMEOUT_MS : setting.value * 1000);
}
