/**
 * What an `env` grant (Deno's --allow-env) may name. Never a variable Ward sets for the child or
 * owns: a grant could otherwise replace the run's model access, the CLI's settings or what a
 * shell or the loader runs. A name that looks like a secret needs the person's confirmation.
 */
import { WardError } from '../base/errors.js';

/** The model access (ANTHROPIC_*), the CLI's own settings and folder (CLAUDE_*), Ward's (WARD_*), the loader's and a shell's start-up file. */
const RESERVED_ENV = /^(ANTHROPIC_|CLAUDE_|WARD_|LD_|DYLD_)|^BASH_ENV$/;

/** Why `name` may never pass from Ward's environment to an agent, or null when it may. */
export function reservedEnvReason(name: string): string | null {
  if (!RESERVED_ENV.test(name)) return null;
  return `${name} is Ward's to set or to keep out: ANTHROPIC_*, CLAUDE_*, WARD_*, LD_*, DYLD_* and BASH_ENV never pass from Ward's environment to an agent`;
}

/** `*TOKEN*`, `*KEY*`, `*SECRET*`, `*PASSWORD*` and the like. */
export function looksLikeSecretName(name: string): boolean {
  return /TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i.test(name);
}

/**
 * A stored grant passes its variable at every run without asking, so one that looks like a secret
 * is written only when the person confirmed it (`--confirm-secret-env`). A flag on `ward run`
 * needs none: Ward asks when that run starts.
 */
export function assertSecretEnvConfirmed(rules: readonly { readonly kind: string; readonly effect: string; readonly value: string }[], confirmed: boolean): void {
  if (confirmed) return;
  const secret = rules.find((rule) => rule.kind === 'env' && rule.effect === 'allow' && looksLikeSecretName(rule.value));
  if (secret === undefined) return;
  throw new WardError(
    'invalid_grant',
    `${secret.value} looks like a secret, and a stored grant hands it to the agent at every run without asking: confirm with ward permissions grant … --confirm-secret-env, or grant it for one run with ward run --allow-env=${secret.value} (Ward asks when the run starts)`,
    { desktop: `${secret.value} looks like a secret, and a stored grant would hand it to the agent at every run without asking; it is not stored. Ward asks for it when a run starts.` },
  );
}
