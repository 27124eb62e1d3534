import type { Command } from '../command.js';

/**
 * A subcommand, what it does and how to load it: each is its own chunk, so `ward X` loads only
 * X's code, and `ward help` none.
 */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

/** Every `ward` subcommand, in the order `ward help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'doctor', summary: 'check the data folder, every namespace database, the keychain, the pinned CLI, the admin policy, Claude Code managed settings and the sandbox', load: async () => (await import('./doctor.js')).doctorCommand },
  { name: 'run', summary: 'send a prompt to an agent and stream the answer (Ctrl-C stops the turn)', load: async () => (await import('./run.js')).runCommand },
  { name: 'service', summary: 'show or stop the background service that keeps Ward and a CLI ready for the next "ward run"', load: async () => (await import('./service.js')).serviceCommand },
  { name: 'reconcile', summary: 'record the outcome of an uncertain run after checking its effects (frees the conversation)', load: async () => (await import('./run.js')).reconcileCommand },
  { name: 'agents', summary: 'create (publish a new version of), list or show agents', load: async () => (await import('./agents.js')).agentsCommand },
  { name: 'connections', summary: 'add, list, sign in to and pick the tools of MCP servers (local stdio programs or remote https services)', load: async () => (await import('./connections.js')).connectionsCommand },
  { name: 'namespace', summary: 'create or list namespaces (separate credentials, sessions and data)', load: async () => (await import('./namespace.js')).namespaceCommand },
  { name: 'conversations', summary: "list a namespace's conversations", load: async () => (await import('./conversations.js')).conversationsCommand },
  { name: 'replay', summary: "print a conversation's journal, from a sequence number on", load: async () => (await import('./replay.js')).replayCommand },
  { name: 'changes', summary: 'what the runs of a conversation did to its files (added, modified, deleted, renamed), with --diff their diffs', load: async () => (await import('./changes.js')).changesCommand },
  { name: 'rewind', summary: 'restore the files to their state before a run or an event (checked for conflicts first; journaled and undoable)', load: async () => (await import('./changes.js')).rewindCommand },
  { name: 'verify', summary: "check a conversation's hash chain and its anchors; names the first altered or missing event", load: async () => (await import('./verify.js')).verifyCommand },
  { name: 'search', summary: 'find words in prompts, answers, tool names and tool previews across a namespace (best first)', load: async () => (await import('./search.js')).searchCommand },
  { name: 'usage', summary: "tokens and cost per day (UTC) of a namespace's runs, or per run with --runs", load: async () => (await import('./usage.js')).usageCommand },
  { name: 'export', summary: 'write a conversation as a signed bundle anyone can verify, or as a Markdown or HTML transcript', load: async () => (await import('./export.js')).exportCommand },
  { name: 'verify-bundle', summary: 'check an export bundle offline: its signature, statement and hash chain (no data folder, keychain or network)', load: async () => (await import('./verify-bundle.js')).verifyBundleCommand },
  { name: 'review', summary: 'print an export bundle as "ward replay" would, after checking it (read-only, offline)', load: async () => (await import('./review.js')).reviewCommand },
  { name: 'keys', summary: "show or hand out the public half of a namespace's export signing key", load: async () => (await import('./keys.js')).keysCommand },
  { name: 'permissions', summary: 'show what a conversation may do and what was decided; grant or revoke', load: async () => (await import('./permissions.js')).permissionsCommand },
  { name: 'login', summary: 'sign in to an identity provider in the system browser (OpenID Connect, PKCE)', load: async () => (await import('./login.js')).loginCommand },
  { name: 'whoami', summary: "show a namespace's sign-ins (issuer, subject, expiry; never a token)", load: async () => (await import('./whoami.js')).whoamiCommand },
  { name: 'logout', summary: 'revoke sign-ins at the provider, then forget them (--local: forget without revoking)', load: async () => (await import('./logout.js')).logoutCommand },
  { name: 'provider', summary: 'store the model credential (API key or Claude subscription token) from stdin, show whether one is set, or delete it', load: async () => (await import('./provider.js')).providerCommand },
  { name: 'audit', summary: "send the journal's waiting events to the admin policy's audit sink (each `ward run` starts this in the background)", load: async () => (await import('./audit.js')).auditCommand },
  { name: 'policy', summary: 'show the admin policy: every key with its value, level and source', load: async () => (await import('./policy.js')).policyCommand },
];
