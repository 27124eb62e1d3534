/**
 * How a model provider is shown a credential: one place, so a run through the gateway and
 * "Test connection" send the same headers.
 */
import type { ModelCredential } from '../credentials/model-credential.js';

/** The namespace's key or subscription token, or a company LLM gateway's sign-in token (its OpenID Connect access token). */
export type ProviderCredential = ModelCredential | { readonly kind: 'bearer'; readonly value: string };

/** An API key goes as `x-api-key`; a subscription or sign-in token as `Authorization: Bearer`. */
export function providerHeaders(credential: ProviderCredential): Record<string, string> {
  return credential.kind === 'api-key' ? { 'x-api-key': credential.value } : { authorization: `Bearer ${credential.value}` };
}
