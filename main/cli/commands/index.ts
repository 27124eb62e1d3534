import type { Command } from '../command.js';

/** A subcommand and how to load it: each is its own chunk, so `ward X` loads only X's code. */
export interface CommandEntry {
  readonly name: string;
  load(): Promise<Command>;
}

/** Every `ward` subcommand, in the order `ward help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'doctor', load: async () => (await import('./doctor.js')).doctorCommand },
  { name: 'run', load: async () => (await import('./run.js')).runCommand },
  { name: 'reconcile', load: async () => (await import('./run.js')).reconcileCommand },
  { name: 'agents', load: async () => (await import('./agents.js')).agentsCommand },
  { name: 'connections', load: async () => (await import('./connections.js')).connectionsCommand },
  { name: 'namespace', load: async () => (await import('./namespace.js')).namespaceCommand },
  { name: 'conversations', load: async () => (await import('./conversations.js')).conversationsCommand },
  { name: 'replay', load: async () => (await import('./replay.js')).replayCommand },
  { name: 'verify', load: async () => (await import('./verify.js')).verifyCommand },
  { name: 'search', load: async () => (await import('./search.js')).searchCommand },
  { name: 'usage', load: async () => (await import('./usage.js')).usageCommand },
  { name: 'export', load: async () => (await import('./export.js')).exportCommand },
  { name: 'verify-bundle', load: async () => (await import('./verify-bundle.js')).verifyBundleCommand },
  { name: 'review', load: async () => (await import('./review.js')).reviewCommand },
  { name: 'keys', load: async () => (await import('./keys.js')).keysCommand },
  { name: 'permissions', load: async () => (await import('./permissions.js')).permissionsCommand },
  { name: 'login', load: async () => (await import('./login.js')).loginCommand },
  { name: 'whoami', load: async () => (await import('./whoami.js')).whoamiCommand },
  { name: 'logout', load: async () => (await import('./logout.js')).logoutCommand },
  { name: 'provider', load: async () => (await import('./provider.js')).providerCommand },
  { name: 'policy', load: async () => (await import('./policy.js')).policyCommand },
];
