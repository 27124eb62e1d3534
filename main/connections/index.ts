/** Entry point for hosts (the `ward` command, the Electron main process, the runner). */
import type { DataFolder } from '../store/data-folder.js';
import { openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { ConnectionManager, type ConnectionManagerOptions } from './manager.js';
import { ConnectionRegistry } from './registry.js';
import { watchedSecrets } from './watched-secrets.js';

export { ConnectionManager, type ConnectionView, type Discovery, type ConfineServer } from './manager.js';
export type { OpenBrowser } from './sign-in.js';
export { ConnectionRegistry, type ConnectionRecord, type ToolPin } from './registry.js';
export { parseConnectionSpec, exposedToolName, checkSandboxFolder, type ConnectionSpec } from './config.js';
export { UpstreamError } from '../upstreams/errors.js';

/** The connections of one namespace, with that namespace's registry and secret store (N1). */
export function openConnections(
  core: DataFolder,
  ns: Namespace,
  options: { store?: OpenStoreOptions; limits?: ConnectionManagerOptions['limits']; now?: () => number; onSecret?: (value: string) => void; clientMetadataUrl?: string; elicit?: ConnectionManagerOptions['elicit']; confine?: ConnectionManagerOptions['confine']; unsandboxedRefusal?: string } = {},
): ConnectionManager {
  const store = core.store(ns, { mustExist: true });
  const secrets = openSecretStore(core.home, ns, options.store);
  return new ConnectionManager({
    registry: new ConnectionRegistry(store.db, ns),
    secrets: options.onSecret === undefined ? secrets : watchedSecrets(secrets, options.onSecret),
    namespaceDir: namespaceDir(core.home, ns),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.clientMetadataUrl ? { clientMetadataUrl: options.clientMetadataUrl } : {}),
    ...(options.elicit ? { elicit: options.elicit } : {}),
    ...(options.confine ? { confine: options.confine } : {}),
    ...(options.unsandboxedRefusal ? { unsandboxedRefusal: options.unsandboxedRefusal } : {}),
  });
}
