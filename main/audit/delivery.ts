/**
 * The audit sink's delivery loop (issue 28): it runs beside the app, never on a turn's path. Per
 * namespace it reads the next batch the sink has not taken from the journal (the outbox), sends
 * it, and only when the receiver closed cleanly moves the cursor (at-least-once; the event's hash
 * is its id for the receiver's dedupe). A failure keeps the backlog and waits with exponential
 * backoff and jitter; memory is one batch, every wait is bounded.
 */
import fs from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describeError } from '../base/errors.js';
import type { AuditOutbox } from '../store/audit-outbox.js';
import type { OtlpSink, OtlpTarget } from './otlp-sender.js';
import { formatRecord, frame, type AuditContent, type AuditEvent, type RecordContext } from './syslog-record.js';
import { DEFAULT_SEND_LIMITS, sendBatch, type SendLimits, type SyslogTarget } from './syslog-sender.js';

/** The policy's auditSink.syslog (validated by main/policy). */
export interface SyslogSink {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly caFile?: string;
}

/** A change of the sink's state: journaled once per change, so a sink dead for a week is one event, not one per retry. */
export interface SinkStateChange {
  readonly state: 'failing' | 'delivering';
  readonly failingSince: string;
  readonly reason: string | null;
  readonly waiting: number;
}

/** One namespace's outbox and what its records say about it. */
export interface AuditSource {
  readonly namespace: string;
  readonly outbox: AuditOutbox;
  /** Journals a change of the sink's state in this conversation (whose events were waiting). */
  readonly note?: (conversationId: string, change: SinkStateChange) => void;
  /** Secrets to redact in 'full' mode (read when a batch is sent). */
  readonly secrets: () => Promise<readonly string[]>;
  /** Whether a turn of this namespace runs now, in any process (a `ward run` beside the background sender): then the loop only trickles. */
  readonly turning?: () => boolean;
}

export interface DeliveryOptions {
  readonly sink: AuditSink;
  readonly content: AuditContent;
  readonly sources: () => readonly AuditSource[];
  readonly context: Omit<RecordContext, 'namespace'>;
  readonly limits?: SendLimits;
  /** Most events per batch (default 2,000: one TLS connection a batch, so fewer, bigger batches drain faster): the loop's memory bound. */
  readonly batchSize?: number;
  /** Wait when nothing is pending (default 2 s). */
  readonly idleMs?: number;
  readonly backoffMs?: { readonly first: number; readonly max: number };
  /** Whether a turn is running in this process: then the loop only trickles (turnBatchSize per turnPauseMs), since the turn needs the CPU. */
  readonly turning?: () => boolean;
  /** Whether a turn is starting (the CLI's CPU-heavy start, before its run is recorded): then the loop sends nothing, and looks again after turnPace's pause. */
  readonly holding?: () => boolean;
  /** While a turn runs: most events per batch (default 200) and the wait after each batch (default 500 ms). */
  readonly turnPace?: { readonly batchSize: number; readonly pauseMs: number };
  /**
   * Between turns less than `withinMs` apart (a person at work, the next turn likely soon): batches
   * of `batchSize`, each followed by a rest `restFactor` times as long as it took, so a turn that
   * starts unannounced (its first ~100 ms, Node's own start) rarely meets a batch. Default 60 s,
   * 500 events, 3 (a quarter of the full speed); with no turn for `withinMs`, full speed again.
   */
  readonly betweenTurnsPace?: { readonly withinMs: number; readonly batchSize: number; readonly restFactor: number };
  /** When a turn of another process last started or ended (ms since the epoch): a sender started after a turn knows of it. */
  readonly lastTurnAt?: () => number;
  /** Told of each failure (the journal gets only the changes of state: AuditSource.note). */
  readonly onProblem?: (problem: string) => void;
  readonly random?: () => number;
}

export interface DeliveryStatus {
  readonly sent: number;
  readonly failures: number;
  readonly lastProblem: string | null;
  /** Since when (ms since the epoch) every namespace's outbox was found empty; null while sending or failing. */
  readonly idleSince: number | null;
  /** Since when sending fails; null while it does not. */
  readonly failingSince: string | null;
}

/** A caFile bigger than this is not a CA bundle. */
const MAX_CA_BYTES = 1024 * 1024;

/** The caFile's certificates, read now (so a replaced file counts at the next batch). */
function readCaFile(caFile: string): string {
  const size = fs.statSync(caFile).size;
  if (size > MAX_CA_BYTES) throw new Error(`the audit sink's caFile ${caFile} is ${size} bytes, more than a CA bundle (${MAX_CA_BYTES})`);
  return fs.readFileSync(caFile, 'utf8');
}

/** Where to connect, with the caFile's certificates. */
export function syslogTarget(sink: SyslogSink): SyslogTarget {
  const { host, port, tls, caFile } = sink;
  return caFile === undefined ? { host, port, tls } : { host, port, tls, extraCa: readCaFile(caFile) };
}

/** The collector, its caFile's certificates, and one bound for the whole export: the sum of syslog's three. */
export function otlpTarget(sink: OtlpSink, limits: SendLimits): OtlpTarget {
  const timeoutMs = limits.connectMs + limits.writeMs + limits.closeMs;
  return sink.caFile === undefined ? { endpoint: sink.endpoint, timeoutMs } : { endpoint: sink.endpoint, timeoutMs, extraCa: readCaFile(sink.caFile) };
}

/** The policy's auditSink (validated by main/policy): exactly one of the two. */
export type AuditSink = { readonly syslog: SyslogSink } | { readonly otlp: OtlpSink };

/**
 * The OpenTelemetry exporter is some 250 CommonJS modules (seconds of a `ward run` under load,
 * issue 29): loaded where an OTLP sink is configured, when its first batch is sent.
 */
export function otlpModules() {
  return Promise.all([import('./otlp-sender.js'), import('./otlp-record.js')]);
}

/**
 * Sends one batch; resolves only once the receiver took all of it (only then does the cursor move).
 * `giveWay` runs between the batch's slices and before it connects: the loop's way to yield to a turn.
 */
export type BatchSender = (events: readonly AuditEvent[], context: RecordContext, secrets: readonly string[], signal: AbortSignal, giveWay?: () => Promise<void>) => Promise<void>;

/** Events formatted in one go: a 2,000-event batch in one piece held the event loop (a turn's stream) ~80 ms. */
const FORMAT_SLICE = 100;

/** `map` over the items a slice at a time, running `between` (by default: the event loop, a turn's I/O) between slices. */
export async function mapInSlices<T, R>(items: readonly T[], map: (item: T) => R, between: () => Promise<unknown> = nextTurn): Promise<R[]> {
  const mapped: R[] = [];
  for (let start = 0; start < items.length; start += FORMAT_SLICE) {
    if (start > 0) await between();
    for (let index = start; index < Math.min(items.length, start + FORMAT_SLICE); index++) mapped.push(map(items[index]!));
  }
  return mapped;
}

export function batchSender(sink: AuditSink, content: AuditContent, limits: SendLimits = DEFAULT_SEND_LIMITS): BatchSender {
  if ('syslog' in sink) {
    return async (events, context, secrets, signal, giveWay = nextTurn) => {
      const framed = Buffer.concat(await mapInSlices(events, (event) => frame(formatRecord(event, context, content, secrets)), giveWay));
      await giveWay();
      return sendBatch(syslogTarget(sink.syslog), framed, limits, signal);
    };
  }
  return async (events, context, secrets, signal, giveWay = nextTurn) => {
    const [{ exportLogs }, { otlpRecord, resourceAttributes }] = await otlpModules();
    const records = await mapInSlices(events, (event) => otlpRecord(event, context, content, secrets), giveWay);
    await giveWay();
    return exportLogs(otlpTarget(sink.otlp, limits), resourceAttributes(context), records, signal);
  };
}

export class AuditDelivery {
  private running = false;
  /** Aborts the batch in flight when the app closes: it is not counted as taken, so it is sent again later. */
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private sent = 0;
  private failures = 0;
  private lastProblem: string | null = null;
  private idleSince: number | null = null;
  /** When the loop last saw a turn starting or running (Date.now()). */
  private turnSeenAt = Number.NEGATIVE_INFINITY;
  /** The batch being sent: where a failure is journaled. */
  private inFlight: { readonly source: AuditSource; readonly conversationId: string } | undefined;
  /** Since when sending fails, and where that was journaled (the recovery goes to the same place). */
  private failing: { readonly since: string; readonly source: AuditSource; readonly conversationId: string } | null = null;

  private readonly send: BatchSender;

  constructor(private readonly options: DeliveryOptions) {
    this.send = batchSender(options.sink, options.content, options.limits);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the batch in flight (itself bounded by the send limits). */
  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    this.wake?.();
    await this.loop;
  }

  status(): DeliveryStatus {
    return { sent: this.sent, failures: this.failures, lastProblem: this.lastProblem, idleSince: this.idleSince, failingSince: this.failing?.since ?? null };
  }

  /** Sends what every namespace has waiting, batch by batch; throws on the first failure. */
  async drain(): Promise<number> {
    let total = 0;
    for (const source of this.options.sources()) {
      for (;;) {
        // Between batches the event loop runs what waits (a turn's stream) before the next read.
        await nextTurn();
        if (this.options.holding?.() === true) {
          this.turnSeenAt = Date.now();
          await this.pause(this.turnPace.pauseMs);
          if (this.abort.signal.aborted) break;
          continue;
        }
        const turning = (this.options.turning?.() ?? false) || (source.turning?.() ?? false);
        if (turning) this.turnSeenAt = Date.now();
        const gentle = !turning && Date.now() - Math.max(this.turnSeenAt, this.options.lastTurnAt?.() ?? 0) < this.betweenTurnsPace.withinMs;
        const started = performance.now();
        const sent = await this.sendNext(source, turning ? this.turnPace.batchSize : gentle ? this.betweenTurnsPace.batchSize : (this.options.batchSize ?? 2_000));
        total += sent;
        if (sent === 0 || this.abort.signal.aborted) break;
        if (turning) await this.pause(this.turnPace.pauseMs);
        else if (gentle) await this.pause((performance.now() - started) * this.betweenTurnsPace.restFactor);
        if (this.abort.signal.aborted) break;
      }
    }
    return total;
  }

  private async run(): Promise<void> {
    // The first batch waits for the next turn of the event loop, or a turn's pause when a turn is
    // starting (a `ward run`): never on the turn's start (its gateway, its CLI's spawn).
    await this.pause(this.options.turning?.() ? this.turnPace.pauseMs : 0);
    let attempt = 0;
    const { first, max } = this.options.backoffMs ?? { first: 1_000, max: 5 * 60_000 };
    while (this.running) {
      try {
        if ((await this.drain()) > 0) this.idleSince = null;
        else this.idleSince ??= Date.now();
        attempt = 0;
        if (!this.running) break;
        await this.pause(this.options.idleMs ?? 2_000);
      } catch (error) {
        if (!this.running) break;
        this.idleSince = null;
        this.failures++;
        this.lastProblem = describeError(error);
        this.options.onProblem?.(this.lastProblem);
        if (this.failing === null && this.inFlight !== undefined) {
          this.failing = { since: new Date().toISOString(), ...this.inFlight };
          this.note('failing', this.lastProblem);
        }
        // Full jitter over an exponential ceiling: a fleet that lost its SIEM does not return in step.
        const ceiling = Math.min(max, first * 2 ** Math.min(attempt++, 20));
        await this.pause(ceiling / 2 + (ceiling / 2) * (this.options.random ?? Math.random)());
      }
    }
  }

  /**
   * Between a batch's slices and before it connects: a turn that starts meanwhile stops the batch
   * where it is until the CLI's start is over (a few seconds at most; no connection is open yet
   * while it formats). A batch read just before a turn otherwise went on at full speed through the
   * turn's start: measured, most of the sender's CPU during a turn. The pace during and after a
   * turn is set per batch (drain), not here.
   */
  private async giveWay(): Promise<void> {
    await nextTurn();
    while (this.options.holding?.() === true && !this.abort.signal.aborted) {
      this.turnSeenAt = Date.now();
      await this.pause(this.turnPace.pauseMs);
    }
  }

  private get betweenTurnsPace(): { readonly withinMs: number; readonly batchSize: number; readonly restFactor: number } {
    return this.options.betweenTurnsPace ?? { withinMs: 60_000, batchSize: 500, restFactor: 3 };
  }

  private get turnPace(): { readonly batchSize: number; readonly pauseMs: number } {
    return this.options.turnPace ?? { batchSize: 200, pauseMs: 500 };
  }

  private async sendNext(source: AuditSource, batchSize: number): Promise<number> {
    const events = source.outbox.pending(batchSize);
    if (events.length === 0) return 0;
    const secrets = this.options.content === 'full' ? await source.secrets() : [];
    this.inFlight = { source, conversationId: events[0]!.conversationId };
    const context = { ...this.options.context, namespace: source.namespace };
    await this.send(events, context, secrets, this.abort.signal, () => this.giveWay());
    source.outbox.advance(events, new Date());
    this.sent += events.length;
    this.lastProblem = null;
    if (this.failing !== null) {
      this.note('delivering', null);
      this.failing = null;
    }
    return events.length;
  }

  private note(state: SinkStateChange['state'], reason: string | null): void {
    const { since, source, conversationId } = this.failing!;
    source.note?.(conversationId, { state, failingSince: since, reason: reason?.slice(0, 500) ?? null, waiting: source.outbox.backlog().count });
  }


  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
