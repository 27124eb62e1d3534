/**
 * What refuses a turn before its CLI starts, checked in one place: the pinned CLI (R1), the admin
 * policy (P5: CLI version, provider, model, the agent's inline servers) and the model credential.
 * RunService.preflight runs it before anything is created (issue 16 #7). The turn admitted right
 * after it uses that check (./run-service.ts start()); a turn admitted otherwise checks for itself.
 */
import type { AgentSpec } from '../../agents/spec.js';
import { traceMark } from '../../base/trace.js';
import type { Namespace } from '../../namespaces/namespace.js';
import { assertCliVersionAllowed, assertConnectionAllowed, assertModelAllowed, assertProviderAllowed } from '../../policy/policy.js';
import type { ModelProfile } from '../../providers/model-profile.js';
import { cliVerificationCache, verifyPinnedCli, type PinnedCli } from '../../runner/pin.js';
import { providerAccess, type ProviderAccess } from './provider-access.js';
import type { TurnDeps } from './turn-deps.js';

export interface Readiness {
  readonly pinned: PinnedCli;
  readonly access: ProviderAccess;
}

/** A readiness check, with what it was checked for and the credential values it read. */
export interface CheckedReadiness {
  readonly spec: AgentSpec;
  readonly profile: ModelProfile;
  readonly readiness: Readiness;
  readonly secrets: readonly string[];
}

/**
 * The turn's readiness: `checked` when it was made for the same agent version and model profile
 * (the turn need not read the keychain and check the pin a second time), else checked now.
 */
export async function readinessFor(deps: TurnDeps, ns: Namespace, spec: AgentSpec, profile: ModelProfile, onSecret: (value: string) => void, checked: CheckedReadiness | undefined): Promise<Readiness> {
  if (checked !== undefined && JSON.stringify(checked.spec) === JSON.stringify(spec) && JSON.stringify(checked.profile) === JSON.stringify(profile)) {
    for (const secret of checked.secrets) onSecret(secret);
    return checked.readiness;
  }
  return checkReadiness(deps, ns, spec, profile, onSecret);
}

/** Throws the first reason the turn cannot run; `onSecret` is told each credential value read. */
export async function checkReadiness(deps: TurnDeps, ns: Namespace, spec: AgentSpec, profile: ModelProfile, onSecret: (value: string) => void): Promise<Readiness> {
  assertProviderAllowed(deps.policy, profile.baseUrl);
  assertModelAllowed(deps.policy, profile.model);
  // Servers by what they are (P5): the inline ones here, the connections as openRunTools reads them.
  for (const [name, upstream] of Object.entries(spec.upstreams)) assertConnectionAllowed(deps.policy, name, { transport: 'stdio', command: upstream.command, args: upstream.args });
  // Independent, and each waits on I/O (the binary's record; the keychain): both at once. The pin's verdict is reported first.
  const [pinCheck, accessCheck] = await Promise.allSettled([
    verifyPinnedCli({ verifiedCacheFile: cliVerificationCache(deps.home), ...deps.pin }).finally(() => traceMark('pin-checked')),
    providerAccess({ home: deps.home, namespace: ns, env: deps.env, profile, resolveCredential: deps.resolveCredential, onSecret }).finally(() => traceMark('credential-read')),
  ]);
  if (pinCheck.status === 'rejected') throw pinCheck.reason;
  assertCliVersionAllowed(deps.policy, pinCheck.value.version);
  if (accessCheck.status === 'rejected') throw accessCheck.reason;
  return { pinned: pinCheck.value, access: accessCheck.value };
}
