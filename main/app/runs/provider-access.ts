/**
 * How a run reaches its model provider through the gateway (G1–G3): which key mode the child is
 * told (so the CLI sends the headers that mode needs) and how main reads the real credential, at
 * each call and never before it is needed. A profile names either a key (the namespace's stored
 * key or subscription token, else Ward's environment) or the namespace's OpenID Connect sign-in,
 * sent as a bearer token to a company's LLM gateway and refreshed once after a 401 (C5).
 */
import { openSecretStore } from '../../credentials/open-store.js';
import type { ModelCredential, ModelCredentialKind } from '../../credentials/model-credential.js';
import type { Namespace } from '../../namespaces/namespace.js';
import type { ModelProfile } from '../../providers/model-profile.js';
import type { ProviderCredential } from '../../providers/provider-headers.js';

export interface ProviderAccess {
  /** The variable the child's run capability goes in: a key, or a subscription token. */
  readonly childMode: ModelCredentialKind;
  credential(): Promise<ProviderCredential>;
  refresh?(): Promise<ProviderCredential>;
}

export interface ProviderAccessInput {
  readonly home: string;
  readonly namespace: Namespace;
  readonly env: NodeJS.ProcessEnv;
  readonly profile: ModelProfile;
  readonly resolveCredential: (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> | ModelCredential;
  /** Told every credential value read, so the turn's journal redacts it (C3). */
  readonly onSecret: (value: string) => void;
}

/** Reads the credential once now, so a missing key or sign-in refuses the turn before anything starts. */
export async function providerAccess(input: ProviderAccessInput): Promise<ProviderAccess> {
  const { home, namespace, env, profile, onSecret } = input;
  if (profile.signIn === null) {
    const read = async (): Promise<ModelCredential> => {
      const credential = await input.resolveCredential(namespace, env);
      onSecret(credential.value);
      return credential;
    };
    const first = await read();
    return { childMode: first.kind, credential: read };
  }
  // OpenID Connect code (openid-client) is loaded only for a profile that signs in.
  const { openSession } = await import('../../auth/session.js');
  const session = openSession({ home, namespace, store: openSecretStore(home, namespace) }, profile.signIn);
  let seen = await session.tokens();
  onSecret(seen.accessToken);
  const bearer = (tokens: typeof seen): ProviderCredential => {
    seen = tokens;
    onSecret(tokens.accessToken);
    return { kind: 'bearer', value: tokens.accessToken };
  };
  return {
    childMode: 'api-key',
    credential: async () => bearer(await session.tokens()),
    refresh: async () => bearer(await session.refresh(seen)),
  };
}
