/**
 * The audit sink (issue 28) as the app runs it: the policy's auditSink and auditContent, every
 * namespace's journal as the outbox, the namespace's secrets for 'full' mode's redaction.
 */
import os from 'node:os';
import { AuditDelivery, type AuditSource, type DeliveryOptions, type SyslogSink } from '../audit/delivery.js';
import type { AuditContent } from '../audit/syslog-record.js';
import { SecretScanner } from '../export/secret-scan.js';
import { parseNamespace } from '../namespaces/namespace.js';
import { osUserName, policySetting, type AdminPolicy } from '../policy/policy.js';
import type { DataFolder } from '../store/data-folder.js';
import type { ExportService } from './exports.js';
import { wardVersion } from './version.js';

export type AuditTuning = Pick<DeliveryOptions, 'limits' | 'batchSize' | 'idleMs' | 'backoffMs' | 'onProblem'>;

/** The sink the policy names, if any. */
export function auditSink(policy: AdminPolicy | null): { readonly sink: SyslogSink; readonly content: AuditContent } | null {
  const sink = policySetting<{ syslog: SyslogSink }>(policy, 'auditSink');
  if (sink === null) return null;
  return { sink: sink.value.syslog, content: policySetting<AuditContent>(policy, 'auditContent')?.value ?? 'metadata' };
}

export function auditSources(folder: DataFolder, exports: () => ExportService): AuditSource[] {
  return folder.listNamespaces().map(({ name }) => {
    const store = folder.store(parseNamespace(name));
    return { namespace: name, outbox: store.audit, secrets: async () => new SecretScanner(await exports().namespaceSecrets(store)).texts };
  });
}

/** The delivery loop for the policy's sink, or null when the policy names none. */
export function auditDelivery(policy: AdminPolicy | null, folder: DataFolder, exports: () => ExportService, tuning: AuditTuning = {}): AuditDelivery | null {
  const configured = auditSink(policy);
  if (configured === null) return null;
  return new AuditDelivery({
    ...tuning,
    ...configured,
    sources: () => auditSources(folder, exports),
    context: { hostname: os.hostname(), user: osUserName(), procId: String(process.pid), wardVersion: wardVersion() },
  });
}
