/**
 * Signing a person in to an OpenID provider (C5) for a namespace, listing and ending those
 * sign-ins: `ward login`, `whoami` and `logout`. The namespace must exist (only "default" comes
 * into being on use); its database is not opened, so a credential command writes nothing it does not need.
 */
import { registryOf, type AuthContext } from '../auth/context.js';
import type { SessionRecord } from '../auth/registry.js';
import type { SessionSelector } from '../auth/session.js';
import type { SignInOptions, SignInResult, SignOutResult } from '../auth/sign-in.js';
import { openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import type { NamespaceService } from './namespaces.js';

export type { SignInOptions } from '../auth/sign-in.js';

export class IdentityService {
  constructor(
    private readonly namespaces: NamespaceService,
    private readonly stores: () => OpenStoreOptions,
  ) {}

  /** Loaded on use: openid-client is not needed by the other commands' cold start. */
  async signIn(namespaceFlag: string | undefined, options: SignInOptions): Promise<SignInResult & { namespace: string }> {
    const context = this.context(namespaceFlag);
    const { signIn } = await import('../auth/sign-in.js');
    return { ...(await signIn(context, options)), namespace: context.namespace.name };
  }

  sessions(namespaceFlag: string | undefined): { namespace: string; sessions: readonly SessionRecord[] } {
    const context = this.context(namespaceFlag);
    return { namespace: context.namespace.name, sessions: registryOf(context).list() };
  }

  async signOut(namespaceFlag: string | undefined, selector: SessionSelector, options: { localOnly: boolean }): Promise<SignOutResult & { namespace: string }> {
    const context = this.context(namespaceFlag);
    const { signOut } = await import('../auth/sign-in.js');
    return { ...(await signOut(context, selector, options)), namespace: context.namespace.name };
  }

  private context(namespaceFlag: string | undefined): AuthContext {
    const namespace = this.namespaces.existing(namespaceFlag);
    return { home: this.namespaces.home, namespace, store: openSecretStore(this.namespaces.home, namespace, this.stores()) };
  }
}
