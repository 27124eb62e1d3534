/**
 * The composition root: the one place that wires Ward's parts together, for the desktop (through
 * main/ipc) and for the `ward` command alike. Each use case is a service here; adapters only
 * translate to and from them.
 *
 * Heavy services (runs, connections, agents: the MCP SDK, the broker, OAuth) are loaded on first
 * use, so a `ward` command loads only what it needs.
 */
import path from 'node:path';
import { resolveWardHome } from '../base/home.js';
import { traceMark } from '../base/trace.js';
import type { OpenStoreOptions } from '../credentials/open-store.js';
import type { Namespace } from '../namespaces/namespace.js';
import { noOnePrompter, type Prompter } from '../permissions/prompter.js';
import { compilePolicy, readPolicy, type AdminPolicy, type PolicyReading } from '../policy/policy.js';
import type { PolicyView } from '../../common/views.js';
import { policyView } from './policy-view.js';
import type { ModelCredential } from '../credentials/model-credential.js';
import { SandboxEngine } from '../sandbox/engine.js';
import { StandInNotes } from '../sandbox/stand-ins.js';
import { DenyScanCache } from '../sandbox/deny-scan-cache.js';
import type { ProviderRoute, GatewayRegistration } from '../gateway/gateway.js';
import type { PinLocation } from '../runner/pin.js';
import { DataFolder } from '../store/data-folder.js';
import type { UpstreamOptions } from '../upstreams/upstreams.js';
import { AgentCatalog } from './agent-catalog.js';
import type { AuditDelivery } from '../audit/delivery.js';
import { lastTurnActivity, turnStarting } from '../audit/turn-signal.js';
import { auditDelivery, auditSinkView, type AuditTuning } from './audit.js';
import { AuditHandOff, type StartSender } from './audit-sender.js';
import type { AgentService } from './agents.js';
import type { ConnectionService } from './connections.js';
import { ConversationService } from './conversations.js';
import { ExportService } from './exports.js';
import { GrantService } from './grants.js';
import { IdentityService } from './identity.js';
import { approvalTimeoutMs, managedStore, sandboxModeFor } from './managed-settings.js';
import { JournalIntegrity } from './journal-integrity.js';
import { NamespaceKeys } from './namespace-keys.js';
import { storedModelCredential } from './model-credential.js';
import { NamespaceService } from './namespaces.js';
import { ReviewService } from './review.js';
import type { RunService } from './runs/run-service.js';
import type { TurnDeps } from './runs/turn-deps.js';
import { SearchService } from './search.js';
import { SettingsService } from './settings.js';
import { runLimits } from './run-limits.js';
import { ChangeService } from './changes.js';
import { ConversationRewind } from './conversation-rewind.js';
import { ChangeViews } from './change-views.js';
import { DEFAULT_TRACKING_LIMITS, type TrackingLimits } from '../changes/tracker.js';
import { UsageService } from './usage.js';
import type { RunBinding, RunRegistration } from '../broker/types.js';

/** Seams for the run loop; production leaves them all unset but `warmSessions`. */
export interface RunOptions {
  /**
   * Keep each conversation's CLI running between turns (issue 19): the desktop, a long-lived
   * process, sets it; `ward run` (one turn per process) does not. settings.json's
   * `warmSessionMinutes` bounds the wait and 0 turns it off.
   */
  readonly warmSessions?: boolean;
  /** How long a warm session waits for its next turn (default: settings.json warmSessionMinutes, 10 min). */
  readonly warmSessionMs?: number;
  /** SIGINT → SIGKILL of the process group after this long (R6, default 5 s). */
  readonly stopGraceMs?: number;
  /** A turn is stopped after this long whatever happens (default: settings.json turnTimeoutMinutes, 30 min). */
  readonly turnTimeoutMs?: number;
  /** A turn whose CLI is silent this long while no tool runs is stopped (default: settings.json idleTimeoutMinutes, 10 min). */
  readonly idleTimeoutMs?: number;
  /** The pin check's location (default: the committed pin). */
  readonly pin?: PinLocation;
  readonly maxLineBytes?: number;
  readonly upstreamOptions?: UpstreamOptions;
  /** Where run folders are made (default os.tmpdir()). */
  readonly tmpRoot?: string;
  /** How long a person has to answer a permission question. */
  readonly promptTimeoutMs?: number;
  /** The OS sandbox for runs (default: one per app, WARD_SANDBOX in the environment as the admin policy allows, auto). */
  readonly sandbox?: SandboxEngine;
  /** The model gateway runs register with (default: one started with the broker). */
  readonly gateway?: { register(route: ProviderRoute): GatewayRegistration };
  /** The model credential (default: the namespace's stored one, else Ward's environment). */
  readonly resolveCredential?: (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> | ModelCredential;
  /** The broker runs register with (default: one started on first use, closed with the app). */
  readonly broker?: { register(binding: RunBinding): RunRegistration };
  /** Bounds of file-change tracking (default: 200,000 files per root, 10 MB per file, 20 s per scan). */
  readonly changeLimits?: Partial<TrackingLimits>;
}

export interface WardAppOptions {
  /** The data folder (default: WARD_HOME in `env`, else the per-OS default). */
  readonly home?: string;
  /** An already open data folder to share (tests that look at the stores while the app runs). */
  readonly folder?: DataFolder;
  /** Ward's own environment: model profile defaults, the child's allowlist, WARD_NAMESPACE. */
  readonly env: NodeJS.ProcessEnv;
  /** Admin policy (P5); omitted = loaded from its system location. */
  readonly policy?: AdminPolicy | null;
  /** Who answers permission questions (P3); default: no one, so anything not granted is denied. */
  readonly prompter?: Prompter;
  readonly run?: RunOptions;
  /** Where connection secrets are kept (default: settings.json of the data folder, the keychain). */
  readonly connectionStore?: OpenStoreOptions;
  /** The audit sink's delivery bounds (default: 10 s connect, 30 s write, 10 s close, 2,000 events a batch). */
  readonly audit?: AuditTuning;
  /** How to start the background audit sender (the `ward` command's way): given, runs hand the journal to it instead of sending from this process. */
  readonly auditSender?: StartSender;
}

export class WardApp {
  readonly folder: DataFolder;
  readonly env: NodeJS.ProcessEnv;
  private loadedPolicy: { value: AdminPolicy | null; reading: PolicyReading } | undefined;
  private namespaceService: NamespaceService | undefined;
  private grantService: GrantService | undefined;
  private settingsService: SettingsService | undefined;
  private identityService: IdentityService | undefined;
  readonly conversations = new ConversationService({ home: () => this.home, grants: () => this.grants });
  readonly search = new SearchService();
  /** Published agents, read without loading any connection code. */
  readonly agentCatalog = new AgentCatalog();
  readonly usage = new UsageService();
  /** What runs did to the files, their diffs, and rewinds (issue 26). */
  readonly changes = new ChangeService(() => this.home);
  /** Rewinding the conversation's CLI session (issue 26); a warm CLI of the conversation is closed, if the run loop is up. */
  readonly conversationRewind = new ConversationRewind(() => this.home, this.changes, async (ns, id) => {
    if (this.runService !== undefined) await (await this.runService).discardWarm(ns, id);
  });
  /** The same, as the desktop's diff viewer and undo buttons show them. */
  readonly changeViews = new ChangeViews(this.changes, () => this.home, this.conversationRewind);
  /** Bundles open for review; they belong to no namespace. */
  readonly reviews = new ReviewService();
  private namespaceKeys: NamespaceKeys | undefined;
  private journalIntegrity: JournalIntegrity | undefined;
  private exportService: ExportService | undefined;
  private runService: Promise<RunService> | undefined;
  private connectionService: Promise<ConnectionService> | undefined;
  private agentService: Promise<AgentService> | undefined;
  private closeBroker: (() => Promise<void>) | undefined;
  /** The broker's and the gateway's start, settled before close() closes them. */
  private servicesStarting: Promise<unknown> | undefined;
  private brokerStarting: ReturnType<TurnDeps['broker']> | undefined;
  private closeGateway: (() => Promise<void>) | undefined;
  private sandboxEngine: SandboxEngine | undefined;
  private modelCredential: TurnDeps['resolveCredential'] | undefined;
  private auditLoop: AuditDelivery | null | undefined;
  private auditHandOff: AuditHandOff | undefined;
  /** The run loop once started (the audit sink trickles while it has a turn). */
  private startedRuns: RunService | undefined;
  /** Whether this app opened the data folder (and so closes it). */
  private readonly ownsFolder: boolean;

  /** Nothing is read here; the policy is loaded by the first service that needs it. */
  constructor(private readonly options: WardAppOptions) {
    this.env = options.env;
    this.ownsFolder = options.folder === undefined;
    this.folder = options.folder ?? new DataFolder(options.home ?? resolveWardHome(options.env));
  }

  /** The admin policy (P5); a malformed one fails closed here, at first use (L1). */
  get policy(): AdminPolicy | null {
    this.loadedPolicy ??= this.loadPolicy();
    return this.loadedPolicy.value;
  }

  /** The policy this app runs under, key by key; read once, so changes apply at the next start. */
  policyView(): PolicyView {
    const policy = this.policy;
    return { ...policyView(this.loadedPolicy!.reading), audit: auditSinkView(policy, this.folder, this.auditLoop) };
  }

  private loadPolicy(): { value: AdminPolicy | null; reading: PolicyReading } {
    const given = this.options.policy;
    if (given === undefined) {
      const reading = readPolicy(this.env);
      return { value: compilePolicy(reading), reading };
    }
    return { value: given, reading: { sources: given?.sources ?? [], settings: given?.settings ?? new Map(), warnings: given?.warnings ?? [], errors: [] } };
  }

  /** Where secrets go: settings.json as the admin policy allows (C1, P5). */
  get secretStores(): OpenStoreOptions {
    return { managed: managedStore(this.policy) };
  }

  /** How long a person has to answer a permission question (the policy's approvalTimeoutSeconds wins). */
  get approvalTimeoutMs(): number {
    return approvalTimeoutMs(this.policy, this.options.run?.promptTimeoutMs);
  }

  /** Conflicting namespace settings fail closed here (N1). */
  get namespaces(): NamespaceService {
    // X2: a rewind or snapshot a killed process left is finished or swept before the namespace is used.
    this.namespaceService ??= new NamespaceService(this.folder, this.env, this.policy, (store) => this.changes.recoverAll(store));
    return this.namespaceService;
  }

  get grants(): GrantService {
    this.grantService ??= new GrantService(this.policy, this.home);
    return this.grantService;
  }

  /** OpenID sign-ins of a namespace (`ward login`, `whoami`, `logout`). */
  get identity(): IdentityService {
    this.identityService ??= new IdentityService(this.namespaces, () => this.secretStores);
    return this.identityService;
  }

  get settings(): SettingsService {
    this.settingsService ??= new SettingsService(this.namespaces, this.env, this.policy, this.secretStores);
    return this.settingsService;
  }

  get home(): string {
    return this.folder.home;
  }

  /** Each namespace's export signing key and journal anchor key (E2, J3). */
  get keys(): NamespaceKeys {
    this.namespaceKeys ??= new NamespaceKeys(this.home, this.options.connectionStore ?? {});
    return this.namespaceKeys;
  }

  get integrity(): JournalIntegrity {
    this.journalIntegrity ??= new JournalIntegrity(this.keys);
    return this.journalIntegrity;
  }

  get exports(): ExportService {
    this.exportService ??= new ExportService(this.keys, this.integrity, this.policy, this.env, this.home);
    return this.exportService;
  }

  /** The OS sandbox of this process, for runs and sandboxed connection servers alike (S1, S5). */
  get sandbox(): SandboxEngine {
    this.sandboxEngine ??= this.options.run?.sandbox ?? new SandboxEngine(sandboxModeFor(this.policy, this.env), undefined, new StandInNotes(path.join(this.home, 'sandbox-stand-ins')), new DenyScanCache(path.join(this.home, 'sandbox-deny-scans.json')));
    return this.sandboxEngine;
  }

  /**
   * `ward run`'s head start (issue 29): the pinned CLI's check and the namespace's model key are
   * read while the run code loads and the sandbox is probed, not after; the turn's own checks
   * then find both kept (the verified hash, the key in storedModelCredential). Never throws: the
   * turn's preflight reads again and reports what fails.
   */
  prepareRun(ns: Namespace): void {
    const pin = this.options.run?.pin;
    void import('../runner/pin.js')
      .then(({ cliVerificationCache, verifyPinnedCli }) => verifyPinnedCli({ verifiedCacheFile: cliVerificationCache(this.home), ...pin }))
      .catch(() => undefined);
    void Promise.resolve()
      .then(() => this.resolveCredential(ns, this.env))
      .catch(() => undefined);
  }

  /** The model credential of runs: the one given, else the namespace's, kept while valid (./model-credential.ts). */
  private get resolveCredential(): TurnDeps['resolveCredential'] {
    this.modelCredential ??= this.options.run?.resolveCredential ?? storedModelCredential(this.home, this.secretStores);
    return this.modelCredential;
  }

  /**
   * Starts sending every namespace's journal to the policy's audit sink (issue 28), once; a loop
   * of its own beside the runs, so a dead or hanging sink costs a turn nothing. Null: no sink.
   */
  startAudit(): AuditDelivery | null {
    if (this.auditLoop === undefined) {
      // A turn runs from the run loop's start (a `ward run`) until no turn is active.
      const turning = () => this.runService !== undefined && (this.startedRuns?.turning ?? true);
      // A turn of any process starting (its run not recorded yet): nothing is sent during the CLI's CPU-heavy start.
      const holding = () => turnStarting(this.home);
      const lastTurnAt = () => lastTurnActivity(this.home);
      this.auditLoop = auditDelivery(this.policy, this.folder, () => this.exports, { turning, holding, lastTurnAt, ...this.options.audit });
      this.auditLoop?.start();
    }
    return this.auditLoop;
  }

  /** The run loop; the first call starts the broker (B1) that every run of this process shares. */
  runs(): Promise<RunService> {
    if (this.runService === undefined) {
      this.runService = this.startRuns();
      // After the line above: the sink's loop sees a turn starting and keeps off its path.
      if (this.options.auditSender === undefined) this.startAudit();
      else this.auditHandOff = new AuditHandOff(this.home, () => this.policy, this.options.auditSender);
    }
    return this.runService;
  }

  connections(): Promise<ConnectionService> {
    this.connectionService ??= import('./connections.js').then(({ ConnectionService }) => new ConnectionService(this.namespaces, this.policy, { ...this.secretStores, ...this.options.connectionStore }, () => this.sandbox));
    return this.connectionService;
  }

  agents(): Promise<AgentService> {
    this.agentService ??= Promise.all([import('./agents.js'), this.connections()]).then(([{ AgentService }, connections]) => new AgentService(this.grants, connections, this.env));
    return this.agentService;
  }

  /** Stops every run (waiting for tool drain, R6/B7), closes the broker, then the stores it opened. */
  async close(): Promise<void> {
    if (this.runService !== undefined) {
      const runs = await this.runService.catch(() => undefined);
      await runs?.stopAll();
    }
    await this.auditLoop?.stop();
    await this.servicesStarting;
    await this.brokerStarting?.catch(() => undefined);
    await this.closeBroker?.();
    await this.closeGateway?.();
    await this.sandboxEngine?.close();
    await this.reviews.closeAll();
    if (this.ownsFolder) this.folder.close();
    // Last: the sender starts after this process's work is done, not beside it.
    this.auditHandOff?.close();
  }

  private async startBroker(): Promise<{ register(binding: RunBinding): RunRegistration; prepareSessions(): unknown }> {
    const { Broker } = await import('../broker/broker.js');
    const started = await Broker.start();
    this.closeBroker = () => started.close();
    return started;
  }

  private async startGateway(): Promise<{ register(route: ProviderRoute): GatewayRegistration }> {
    const { ModelGateway } = await import('../gateway/gateway.js');
    const started = await ModelGateway.start();
    this.closeGateway = () => started.close();
    return started;
  }

  private async startRuns(): Promise<RunService> {
    const run = this.options.run ?? {};
    const sandbox = this.sandbox;
    // A turn needs the gateway (and the broker) only once its pin check and keychain read are
    // done: it starts meanwhile, and a failure to start fails the turn that waits for it.
    // The broker listens only once a run of an agent with MCP tools needs it: the others hand the child no MCP server.
    const broker = () => (this.brokerStarting ??= run.broker === undefined ? this.startBroker().finally(() => traceMark('broker-started')) : Promise.resolve(run.broker));
    const gateway = run.gateway === undefined ? this.startGateway().finally(() => traceMark('gateway-started')) : Promise.resolve(run.gateway);
    this.servicesStarting = Promise.allSettled([gateway]);
    // Admission needs the sandbox's status (WARD_SANDBOX=require refuses at once); both at once.
    const [{ RunService }, sandboxStatus] = await Promise.all([
      import('./runs/run-service.js').finally(() => traceMark('runs-loaded')),
      sandbox.status().finally(() => traceMark('sandbox-probed')),
    ]);
    const deps: TurnDeps = {
      home: this.home,
      env: this.env,
      policy: this.policy,
      broker,
      gateway,
      prompter: this.options.prompter ?? noOnePrompter,
      promptTimeoutMs: this.approvalTimeoutMs,
      stopGraceMs: run.stopGraceMs ?? 5_000,
      limits: () => {
        const limits = runLimits(this.home);
        return {
          turnTimeoutMs: run.turnTimeoutMs ?? limits.turnTimeoutMs,
          idleTimeoutMs: run.idleTimeoutMs ?? limits.idleTimeoutMs,
          warmSessionMs: run.warmSessions === true ? (run.warmSessionMs ?? limits.warmSessionMs) : 0,
          changeStoreMaxBytes: limits.changeStoreMaxBytes,
          perCallScanMs: limits.perCallScanMs,
        };
      },
      changes: this.changes,
      changeLimits: { ...DEFAULT_TRACKING_LIMITS, ...run.changeLimits },
      pin: run.pin,
      maxLineBytes: run.maxLineBytes,
      upstreamOptions: run.upstreamOptions,
      tmpRoot: run.tmpRoot,
      sandbox,
      // Probed once, here, so admission can refuse a run synchronously under WARD_SANDBOX=require.
      sandboxStatus,
      resolveCredential: this.resolveCredential,
      // Loaded only for an agent that pins a connection's tool: a plain turn needs none of it.
      openConnections: async (ns, onSecret, elicit) => (await this.connections()).open(ns, onSecret, elicit),
    };
    // J3: each run's end is anchored once the run has settled.
    this.startedRuns = new RunService(this.folder, deps, this.integrity, run.warmSessions === true);
    return this.startedRuns;
  }
}
