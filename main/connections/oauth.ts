/**
 * Sign-in to a remote MCP server per the MCP authorization spec, through the SDK's `auth()`:
 * protected resource metadata, authorization server discovery (or, for a 2025-03-26 server
 * without any metadata, its /authorize, /token and /register), a client (pre-registered, a
 * Client ID Metadata Document, or dynamic registration, in that order), PKCE S256, the
 * `resource` parameter on every authorization and token request, spelled as the server's metadata
 * spells it (C5), and the authorization server's issuer checked (./issuer.ts). Tokens and client
 * secrets live only in the namespace's secret store (C1); this provider keeps a copy in memory for
 * the connection's own requests and nothing else.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { WardError } from '../base/errors.js';
import { checkServerUrl } from '../base/url-policy.js';
import { CALLBACK_PATH } from '../auth/loopback-callback.js';
import { parseScope } from './challenge.js';
import { canonicalServerUri, checkMetadataIssuer, exactResource, sameIssuer, storedIssuer } from './issuer.js';
import { lockPath, withLock } from '../credentials/lock.js';
import type { SecretStore } from '../credentials/secret-store.js';
import { ON_CONNECTIONS } from '../../common/desktop-errors.js';

/** Keychain accounts of a connection (the store adds the namespace hash, N1): tokens, a registration, a pre-registered client's secret. */
export function oauthAccounts(connection: string): { tokens: string; client: string; clientSecret: string } {
  return { tokens: `mcp:${connection}:oauth:tokens`, client: `mcp:${connection}:oauth:client`, clientSecret: `mcp:${connection}:oauth:client-secret` };
}

/** What an interactive sign-in sets on the provider for its duration. */
export interface InteractiveSession {
  readonly redirectUrl: string;
  readonly state: string;
  /** Receives the authorization URL once it has been checked (S256, resource). */
  readonly onAuthorizationUrl: (url: URL) => Promise<void>;
}

function notSignedIn(connection: string): WardError {
  return new WardError('not_signed_in', `connection ${connection} is not signed in; run "ward connections login ${connection}"`, { desktop: `Connection ${connection} is not signed in: sign in ${ON_CONNECTIONS}.` });
}

function parseStored<T>(raw: string | undefined): T | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

export interface ConnectionOAuthOptions {
  readonly connection: string;
  readonly serverUrl: URL;
  readonly allowInsecureHttp: boolean;
  /** A client registered beforehand (its secret, if any, in the secret store); null = CIMD or dynamic registration. */
  readonly clientId?: string | null;
  /** Ward's Client ID Metadata Document (SEP-991), used where the authorization server supports it. */
  readonly clientMetadataUrl?: string;
  readonly secrets: SecretStore;
  /** The namespace folder, where compare-before-delete takes its lock (C4). */
  readonly namespaceDir: string;
}

export class ConnectionOAuthProvider implements OAuthClientProvider {
  private readonly accounts: ReturnType<typeof oauthAccounts>;
  private interactive: InteractiveSession | undefined;
  /** Raw stored values as last read or written, for compare-before-delete. */
  private tokensRaw: string | undefined;
  private tokensLoaded = false;
  private clientRaw: string | undefined;
  private clientLoaded = false;
  /** A registration made during this sign-in: stored with the tokens, or not at all. */
  private pendingClient: string | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  /** The scope the last authorization request asked for (recorded for the next sign-in). */
  private asked: string | null = null;

  constructor(private readonly options: ConnectionOAuthOptions) {
    this.accounts = oauthAccounts(options.connection);
  }

  /** The connection's cross-process lock: refreshes and credential deletion take it (C4). */
  get lockFile(): string {
    return lockPath(this.options.namespaceDir, `mcp:${this.options.connection}:oauth`);
  }

  /** Starts (or ends, with undefined) an interactive sign-in; outside one, needing the browser means "not signed in". */
  setInteractive(session: InteractiveSession | undefined): void {
    this.interactive = session;
    this.verifier = undefined;
    this.pendingClient = undefined;
    // Entering or leaving a sign-in reads the store afresh: a failed sign-in leaves the old tokens in use.
    this.tokensLoaded = false;
    this.clientLoaded = false;
    // A sign-in discovers afresh: the server may name another authorization server by now.
    this.discovery = undefined;
  }

  get redirectUrl(): string {
    // Outside a sign-in no redirect happens (redirectToAuthorization refuses), but the SDK
    // needs a value to treat this as the authorization-code flow.
    return this.interactive?.redirectUrl ?? `http://127.0.0.1${CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Ward',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      // RFC 8252: a native app on a loopback redirect; lets the server accept any port.
      ...({ application_type: 'native' } as object),
    };
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }

  /** The scope the authorization request of this sign-in asked for, null when it named none. */
  get askedScope(): string | null {
    return this.asked;
  }

  state(): string {
    if (this.interactive === undefined) throw notSignedIn(this.options.connection);
    return this.interactive.state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    if (this.options.clientId != null) return this.preRegistered(this.options.clientId);
    const stored = parseStored<OAuthClientInformationMixed & { redirect_uris?: string[] }>(await this.storedClient());
    if (this.interactive === undefined) {
      // Registering is part of signing in, never a side effect of a tool call.
      if (stored === undefined) throw notSignedIn(this.options.connection);
      return stored;
    }
    // A registration made for another loopback port is replaced rather than bent.
    if (stored?.redirect_uris !== undefined && !stored.redirect_uris.includes(this.interactive.redirectUrl)) return undefined;
    return stored;
  }

  private async storedClient(): Promise<string | undefined> {
    if (!this.clientLoaded) {
      this.clientRaw = await this.options.secrets.get(this.accounts.client);
      this.clientLoaded = true;
    }
    return this.clientRaw;
  }

  /** A client registered beforehand is used as configured: never registered, replaced or bound here. */
  private async preRegistered(clientId: string): Promise<OAuthClientInformationMixed> {
    const secret = await this.options.secrets.get(this.accounts.clientSecret);
    return { client_id: clientId, ...(secret === undefined ? {} : { client_secret: secret }) };
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    if (this.options.clientId != null) return;
    const raw = JSON.stringify(info);
    // Within a sign-in, the registration is kept until the tokens come: a refused sign-in stores nothing.
    if (this.interactive !== undefined) this.pendingClient = raw;
    else await this.options.secrets.set(this.accounts.client, raw);
    this.clientRaw = raw;
    this.clientLoaded = true;
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return parseStored<OAuthTokens>(await this.storedTokens());
  }

  private async storedTokens(): Promise<string | undefined> {
    if (!this.tokensLoaded) {
      this.tokensRaw = await this.options.secrets.get(this.accounts.tokens);
      this.tokensLoaded = true;
    }
    return this.tokensRaw;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    if (this.pendingClient !== undefined) {
      await this.options.secrets.set(this.accounts.client, this.pendingClient);
      this.pendingClient = undefined;
    }
    const raw = JSON.stringify(tokens);
    await this.options.secrets.set(this.accounts.tokens, raw);
    this.tokensRaw = raw;
    this.tokensLoaded = true;
  }

  /**
   * Reads the tokens from the store on next use. A refresh starts with this (under the lock), so
   * it uses the newest refresh token even if another Ward process rotated it meanwhile: reusing
   * a rotated one makes servers revoke the whole grant.
   */
  reloadTokens(): void {
    this.tokensLoaded = false;
  }

  /** For the rest of this sign-in, behave as if no tokens were stored (they stay in the store). */
  forgetTokensInMemory(): void {
    this.tokensRaw = undefined;
    this.tokensLoaded = true;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.interactive === undefined) throw notSignedIn(this.options.connection);
    if (authorizationUrl.searchParams.get('code_challenge_method') !== 'S256') {
      throw new WardError('signin_rejected', 'the authorization request does not use PKCE S256; sign-in refused');
    }
    if (!authorizationUrl.searchParams.has('resource')) throw new WardError('signin_rejected', 'the authorization request lacks the resource indicator; sign-in refused');
    if (authorizationUrl.searchParams.get('state') !== this.interactive.state) throw new WardError('signin_rejected', 'the authorization request lost its state; sign-in refused');
    this.checkEndpoint(authorizationUrl, 'authorization endpoint');
    // The scope may come from the server's metadata: bounded and well-formed, or no sign-in.
    const scope = authorizationUrl.searchParams.get('scope');
    this.asked = scope === null ? null : parseScope(scope, 'the authorization request');
    await this.interactive.onAuthorizationUrl(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new WardError('signin_rejected', 'no sign-in is in progress for this connection');
    return this.verifier;
  }

  /**
   * The resource indicator is always sent (C5): the server's advertised resource, exactly as
   * written, when it covers this URL, else the URL itself (RFC 8707, exactResource).
   */
  async validateResourceURL(serverUrl: string | URL, resource?: string): Promise<URL> {
    if (resource === undefined) return exactResource(canonicalServerUri(new URL(serverUrl)));
    if (!checkResourceAllowed({ requestedResource: serverUrl, configuredResource: resource })) {
      throw new WardError('signin_rejected', `the server's protected resource metadata names ${JSON.stringify(resource.slice(0, 200))}, which does not cover ${String(serverUrl)}; sign-in refused`);
    }
    return exactResource(resource);
  }

  private checkEndpoint(url: URL | string | undefined, what: string): void {
    if (url === undefined) return;
    const checked = checkServerUrl(String(url), { allowInsecureHttp: this.options.allowInsecureHttp });
    if (!('reason' in checked)) return;
    const where = checked.reason === 'not_a_url' ? JSON.stringify(String(url).slice(0, 100)) : checked.url.origin;
    const problem = checked.reason === 'credentials' ? 'carries a user name or password' : 'does not use https';
    throw new WardError('signin_rejected', `the ${what} ${where} ${problem}; sign-in refused`);
  }

  /**
   * Discovery results are checked before anything is sent to the authorization server. A server
   * with neither protected resource metadata nor authorization server metadata is a 2025-03-26
   * server: its own origin is the authorization server, at /authorize, /token and /register
   * (the SDK's fallback), under the same https rule; that spec requires PKCE, and every
   * authorization request is checked for S256 anyway (redirectToAuthorization). Metadata naming
   * another issuer is refused (RFC 8414 §3.3); outside a sign-in, so is an authorization server
   * other than the one the stored sign-in came from.
   */
  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    checkMetadataIssuer(state);
    if (this.interactive === undefined) await this.checkSameAuthorizationServer(state.authorizationServerUrl);
    const metadata = state.authorizationServerMetadata;
    if (metadata === undefined) {
      const legacy = state.resourceMetadata === undefined && new URL(state.authorizationServerUrl).href === new URL('/', this.options.serverUrl).href;
      if (!legacy) throw new WardError('signin_rejected', `no OAuth authorization server metadata found for ${state.authorizationServerUrl}; sign-in refused`);
      for (const endpoint of ['/authorize', '/token', '/register']) this.checkEndpoint(new URL(endpoint, state.authorizationServerUrl), `${endpoint.slice(1)} endpoint`);
      this.discovery = state;
      return;
    }
    if (!(metadata.code_challenge_methods_supported ?? []).includes('S256')) {
      throw new WardError('signin_rejected', `the authorization server ${metadata.issuer} does not advertise PKCE S256; sign-in refused`);
    }
    this.checkEndpoint(state.authorizationServerUrl, 'authorization server');
    this.checkEndpoint(metadata.authorization_endpoint, 'authorization endpoint');
    this.checkEndpoint(metadata.token_endpoint, 'token endpoint');
    this.checkEndpoint(metadata.registration_endpoint, 'registration endpoint');
    this.discovery = state;
  }

  /**
   * The server names another authorization server than the one its stored tokens or registration
   * came from (the SDK stamps them): they are not offered to the new one, and registering there
   * is part of signing in, so the person signs in again.
   */
  private async checkSameAuthorizationServer(authorizationServer: string): Promise<void> {
    const client = this.options.clientId == null ? await this.storedClient() : undefined;
    const earlier = [storedIssuer(await this.storedTokens()), storedIssuer(client)].find((issuer) => issuer !== undefined && !sameIssuer(issuer, authorizationServer));
    if (earlier === undefined) return;
    const name = this.options.connection;
    throw new WardError(
      'not_signed_in',
      `connection ${name}'s server now names authorization server ${JSON.stringify(authorizationServer.slice(0, 200))}, not ${JSON.stringify(earlier.slice(0, 200))} where it signed in; run "ward connections login ${name}" to sign in there`,
      { desktop: `Connection ${name}'s server now names another authorization server than the one it signed in with: sign in again ${ON_CONNECTIONS}.` },
    );
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  /**
   * The server said a credential is no longer valid. Deletion is compare-before-delete under
   * the connection's lock (C4): a value another process wrote meanwhile is kept.
   */
  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.verifier = undefined;
      return;
    }
    if (scope === 'discovery') {
      this.discovery = undefined;
      return;
    }
    await withLock(this.lockFile, async () => {
      if ((scope === 'all' || scope === 'tokens') && this.tokensRaw !== undefined) {
        await this.options.secrets.compareAndDelete(this.accounts.tokens, this.tokensRaw);
      }
      if (scope === 'all' || scope === 'client') this.pendingClient = undefined;
      if ((scope === 'all' || scope === 'client') && this.clientRaw !== undefined) {
        await this.options.secrets.compareAndDelete(this.accounts.client, this.clientRaw);
      }
    });
    // Read again next time: another process may hold newer values.
    if (scope === 'all' || scope === 'tokens') this.tokensLoaded = false;
    if (scope === 'all' || scope === 'client') this.clientLoaded = false;
    if (scope === 'all') this.discovery = undefined;
  }
}

export function newState(): string {
  return randomBytes(32).toString('base64url');
}
