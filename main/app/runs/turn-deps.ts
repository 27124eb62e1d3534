/**
 * What every turn of one Ward process shares, in a module of its own: the turn, its launch
 * (./launch.ts), its readiness check (./readiness.ts) and a session started ahead (./prestart.ts)
 * all take it, and none of them needs another to say what it is.
 */
import type { TrackingLimits } from '../../changes/tracker.js';
import type { ConnectionManager } from '../../connections/index.js';
import type { RunBinding, RunRegistration } from '../../broker/types.js';
import type { GatewayRegistration, ProviderRoute } from '../../gateway/gateway.js';
import type { Namespace } from '../../namespaces/namespace.js';
import type { Prompter } from '../../permissions/prompter.js';
import type { AdminPolicy } from '../../policy/policy.js';
import type { ModelCredential } from '../../credentials/model-credential.js';
import type { PinLocation } from '../../runner/pin.js';
import type { SandboxEngine, SandboxStatus } from '../../sandbox/engine.js';
import type { Elicitor } from '../../upstreams/elicitation.js';
import type { UpstreamOptions } from '../../upstreams/upstreams.js';
import type { ChangeService } from '../changes.js';
import type { RunLimits } from '../run-limits.js';

/** What every turn of one Ward process shares (wired once by the composition root). */
export interface TurnDeps {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly policy: AdminPolicy | null;
  /**
   * The broker, started the first time a run of an agent with MCP tools registers with it (a run
   * without hands its CLI no MCP server). `prepareSessions` loads its MCP server code; called once
   * the child is spawned, so it loads while the CLI starts rather than before the spawn.
   */
  readonly broker: () => Promise<{ register(binding: RunBinding): RunRegistration; prepareSessions?(): unknown }>;
  /** The model gateway (G1): the child reaches the provider only through it, with a run capability. */
  readonly gateway: Promise<{ register(route: ProviderRoute): GatewayRegistration }>;
  readonly prompter: Prompter;
  readonly promptTimeoutMs: number | undefined;
  readonly stopGraceMs: number;
  /** How long a turn may take and may stay silent; read at each turn (settings.json can change). */
  readonly limits: () => RunLimits;
  /** Finishes a conversation's interrupted rewind before a turn snapshots its files (X2). */
  readonly changes: ChangeService;
  /** Bounds of the file-change tracking of each turn (X1). */
  readonly changeLimits: TrackingLimits;
  readonly pin: PinLocation | undefined;
  readonly maxLineBytes: number | undefined;
  readonly upstreamOptions: UpstreamOptions | undefined;
  readonly tmpRoot: string | undefined;
  readonly sandbox: SandboxEngine;
  /** What the sandbox found on this machine (probed once, before the first admission). */
  readonly sandboxStatus: SandboxStatus;
  readonly resolveCredential: (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> | ModelCredential;
  /**
   * The namespace's connections; every credential value they read is told to `onSecret` (redacted
   * from the journal), and `elicit` asks the person when a server asks for input.
   */
  readonly openConnections: (ns: Namespace, onSecret: (value: string) => void, elicit?: (connection: string) => Elicitor) => Promise<ConnectionManager>;
}
