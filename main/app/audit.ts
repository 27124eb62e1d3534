/**
 * The audit sink (issue 28) as the app runs it: the policy's auditSink and auditContent, every
 * namespace's journal as the outbox, the namespace's secrets for 'full' mode's redaction.
 */
import os from 'node:os';
import { journalEvent } from '../../common/events.js';
import { AuditDelivery, otlpModules, otlpTarget, syslogTarget, type AuditSink, type AuditSource, type DeliveryOptions } from '../audit/delivery.js';
import { frame, testRecord, type AuditContent, type RecordContext } from '../audit/syslog-record.js';
import { runningSender } from '../audit/sender-lock.js';
import { sendBatch } from '../audit/syslog-sender.js';
import type { DoctorCheck, DoctorProbe } from '../base/doctor-check.js';
import { describeError } from '../base/errors.js';
import { SecretScanner } from '../export/secret-scan.js';
import { parseNamespace } from '../namespaces/namespace.js';
import { osUserName, policySetting, type AdminPolicy } from '../policy/policy.js';
import type { AuditSinkView } from '../../common/views.js';
import type { DataFolder } from '../store/data-folder.js';
import type { ExportService } from './exports.js';
import { wardVersion } from './version.js';

export type AuditTuning = Pick<DeliveryOptions, 'limits' | 'batchSize' | 'idleMs' | 'backoffMs' | 'onProblem' | 'turning' | 'holding' | 'turnPace' | 'betweenTurnsPace' | 'lastTurnAt'>;

/** The sink the policy names, if any. */
export function auditSink(policy: AdminPolicy | null): { readonly sink: AuditSink; readonly content: AuditContent } | null {
  const sink = policySetting<AuditSink>(policy, 'auditSink');
  if (sink === null) return null;
  return { sink: sink.value, content: policySetting<AuditContent>(policy, 'auditContent')?.value ?? 'metadata' };
}

/**
 * Every namespace's outbox, found again only when the data folder's list of databases changes:
 * finding them opens each database for writing (migrations, an integrity check when due), which a
 * delivery cycle must not do while a turn writes its journal.
 */
export function auditSources(folder: DataFolder, exports: () => ExportService): () => readonly AuditSource[] {
  let listing: string | undefined;
  let sources: AuditSource[] = [];
  return () => {
    const files = folder.namespaceFiles();
    if (files.join('\n') === listing) return sources;
    const found = folder.listNamespaces();
    sources = found.map(({ name }) => auditSource(folder, name, exports));
    // A database whose name is not recorded yet (being made) is looked at again next cycle.
    listing = found.length === files.length ? files.join('\n') : undefined;
    return sources;
  };
}

function auditSource(folder: DataFolder, name: string, exports: () => ExportService): AuditSource {
  const store = folder.store(parseNamespace(name));
  return {
    namespace: name,
    outbox: store.audit,
    secrets: async () => new SecretScanner(await exports().namespaceSecrets(store)).texts,
    note: (conversationId, change) => void store.journal.append(conversationId, journalEvent('audit_sink', change)),
    turning: () => store.runs.hasLiveRun(),
  };
}

/** The delivery loop for the policy's sink, or null when the policy names none. */
export function auditDelivery(policy: AdminPolicy | null, folder: DataFolder, exports: () => ExportService, tuning: AuditTuning = {}): AuditDelivery | null {
  const configured = auditSink(policy);
  if (configured === null) return null;
  return new AuditDelivery({
    ...tuning,
    ...configured,
    sources: auditSources(folder, exports),
    context: recordContext(),
  });
}

function recordContext(): Omit<RecordContext, 'namespace'> {
  return { hostname: os.hostname(), user: osUserName(), procId: String(process.pid), wardVersion: wardVersion() };
}

/** What waits in every namespace (read-only: doctor changes nothing); a store not yet migrated counts as unknown. */
function backlogs(folder: DataFolder): { count: number; oldest: string | null; unknown: string[] } {
  const total = { count: 0, oldest: null as string | null, unknown: [] as string[] };
  for (const { name } of folder.listNamespaces()) {
    try {
      const { count, oldest } = folder.readOnlyStore(parseNamespace(name)).audit.backlog();
      total.count += count;
      if (oldest !== null && (total.oldest === null || oldest < total.oldest)) total.oldest = oldest;
    } catch {
      total.unknown.push(name);
    }
  }
  return total;
}

/** The Policy page's line: where events go, what waits (read-only, as doctor reads it) and the loop's last problem. */
export function auditSinkView(policy: AdminPolicy | null, folder: DataFolder, loop: AuditDelivery | null | undefined): AuditSinkView | null {
  const configured = auditSink(policy);
  if (configured === null) return null;
  const waiting = backlogs(folder);
  const status = loop?.status();
  return { where: describeSink(configured.sink), waiting: waiting.count, oldest: waiting.oldest, problem: status === undefined || status.lastProblem === null ? null : status.lastProblem };
}

/** Where events go, as doctor says it: "syslog siem.corp:6514 over TLS (verified)", "OTLP https://otel.corp/v1/logs (TLS verified)". */
export function describeSink(sink: AuditSink): string {
  if ('syslog' in sink) return `syslog ${sink.syslog.host}:${sink.syslog.port} ${sink.syslog.tls ? 'over TLS (verified)' : 'in plain TCP (loopback)'}`;
  return `OTLP ${sink.otlp.endpoint} ${sink.otlp.endpoint.startsWith('https:') ? '(TLS verified)' : '(plain HTTP, loopback)'}`;
}

/** The doctor's bounds: a sink that accepts and never answers costs at most 15 s. */
const DOCTOR_LIMITS = { connectMs: 5_000, writeMs: 5_000, closeMs: 5_000 };

/** `ward doctor`: the sink takes a test record (syslog: connect, TLS verified, the record, a clean close; OTLP: an export of no records answered 2xx), and the backlog's size and age. */
export function probeAuditSink(policy: () => AdminPolicy | null, folder: DataFolder): DoctorProbe {
  return async (): Promise<DoctorCheck> => {
    const configured = auditSink(policy());
    if (configured === null) return { check: 'audit sink', status: 'not_configured', detail: 'the admin policy names no auditSink: events stay in the journal' };
    const waiting = backlogs(folder);
    const sender = runningSender(folder.home);
    const backlog = `${waiting.count} event(s) waiting${waiting.oldest === null ? '' : `, the oldest from ${waiting.oldest}`}${waiting.unknown.length > 0 ? ` (not yet known for ${waiting.unknown.join(', ')})` : ''}${sender === null ? '' : `; the background sender (pid ${sender.pid}) is sending`}`;
    const { sink } = configured;
    const data = { ...('syslog' in sink ? { host: sink.syslog.host, port: sink.syslog.port, tls: sink.syslog.tls } : { endpoint: sink.otlp.endpoint }), content: configured.content, waiting: waiting.count, oldest: waiting.oldest, senderPid: sender?.pid ?? null };
    const where = describeSink(sink);
    try {
      if ('syslog' in sink) await sendBatch(syslogTarget(sink.syslog), frame(testRecord(recordContext(), new Date())), DOCTOR_LIMITS);
      else {
        const [{ exportLogs }, { resourceAttributes }] = await otlpModules();
        await exportLogs(otlpTarget(sink.otlp, DOCTOR_LIMITS), resourceAttributes(recordContext()), []);
      }
      return { check: 'audit sink', status: 'ok', detail: `sending to ${where}${'syslog' in sink ? ', a test record taken' : ''}: ${backlog}`, data };
    } catch (error) {
      return { check: 'audit sink', status: 'error', detail: `${where} unreachable: ${describeError(error)}; ${backlog}, kept until it answers`, data };
    }
  };
}
