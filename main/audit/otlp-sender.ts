/**
 * One batch to an OTLP/HTTP collector (protobuf), through the OpenTelemetry JS SDK: the records
 * are emitted through sdk-logs' LoggerProvider and sent by exporter-logs-otlp-proto's
 * OTLPLogExporter; the batch counts as taken only when the exporter's result callback says
 * success (a 2xx answer). The exporter retries 429/502/503/504 and refused connections itself,
 * within the one time bound given here; anything else fails the batch and it is sent again later.
 */
import { trustedContext } from './trust.js';
import type { Attributes } from '@opentelemetry/api';
import type { LogRecord } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';

/** The policy's auditSink.otlp (validated by main/policy). */
export interface OtlpSink {
  readonly endpoint: string;
  readonly caFile?: string;
}

export interface OtlpTarget {
  readonly endpoint: string;
  /** Certificates trusted besides Node's roots (the policy's caFile, PEM). */
  readonly extraCa?: string;
  /** The whole export, the exporter's own retries included. */
  readonly timeoutMs: number;
}

type ExportResult = Parameters<Parameters<LogRecordExporter['export']>[1]>[0];
/** ExportResultCode.SUCCESS of @opentelemetry/core (not a direct dependency). */
const EXPORT_SUCCESS = 0;
/** As the syslog record's SD-PARAM values. */
const MAX_ATTRIBUTE_CHARS = 1024;

/**
 * Builds `create()` with no OTEL_* variable in the environment: the SDK merges the user's
 * OTEL_EXPORTER_OTLP_HEADERS (often another collector's token, e.g. for the Claude CLI's own
 * telemetry) into every request and takes endpoints, certificates and limits from there too. The
 * policy alone says where audit events go. Synchronous, so nothing else runs while they are away.
 */
function withoutOtelEnvironment<T>(create: () => T): T {
  const saved = Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'));
  for (const [name] of saved) delete process.env[name];
  try {
    return create();
  } finally {
    for (const [name, value] of saved) process.env[name] = value;
  }
}

/** The records as the SDK makes them (limits applied, resource and scope attached). */
function sdkRecords(resource: Attributes, records: readonly LogRecord[], version: string): ReadableLogRecord[] {
  const made: ReadableLogRecord[] = [];
  const provider = new LoggerProvider({
    resource: resourceFromAttributes(resource),
    logRecordLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_CHARS },
    processors: [{ onEmit: (record) => made.push(record), forceFlush: async () => undefined, shutdown: async () => undefined }],
  });
  const logger = provider.getLogger('ward.audit', version);
  for (const record of records) logger.emit(record);
  return made;
}

/** Sends `records` and resolves once the collector answered 2xx; rejects on anything else, the abort included. */
export function exportLogs(target: OtlpTarget, resource: Attributes, records: readonly LogRecord[], signal?: AbortSignal): Promise<void> {
  const made = withoutOtelEnvironment(() => sdkRecords(resource, records, String(resource['service.version'] ?? '')));
  const exporter = withoutOtelEnvironment(
    () =>
      new OTLPLogExporter({
        url: target.endpoint,
        timeoutMillis: target.timeoutMs,
        concurrencyLimit: 1,
        // One connection per batch (none left open between batches); verification is never turned off.
        httpAgentOptions: {
          keepAlive: false,
          rejectUnauthorized: true,
          minVersion: 'TLSv1.2',
          ...(target.extraCa === undefined ? {} : { secureContext: trustedContext(target.extraCa) }),
        },
      }),
  );
  const where = new URL(target.endpoint).origin;
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('the audit delivery stopped'));
      return;
    }
    const onAbort = () => reject(new Error('the audit delivery stopped'));
    signal?.addEventListener('abort', onAbort, { once: true });
    exporter.export(made, (result: ExportResult) => {
      signal?.removeEventListener('abort', onAbort);
      if (result.code === EXPORT_SUCCESS) resolve();
      else reject(new Error(`the audit sink ${where}: ${exportProblem(result.error)}`));
    });
  }).finally(() => {
    // Not awaited: on an abort the request in flight ends by itself within timeoutMs.
    void exporter.shutdown();
  });
}

/** The exporter's error, with the HTTP status and the first of the answer when there is one. */
function exportProblem(error: Error | undefined): string {
  if (error === undefined) return 'the export failed';
  const { code, data } = error as Error & { code?: number; data?: string };
  const status = typeof code === 'number' ? `HTTP ${code} ` : '';
  const answer = typeof data === 'string' && data !== '' ? `: ${data.slice(0, 200).replace(/[\u0000-\u001f\u007f]/g, ' ')}` : '';
  return `${status}${error.message}${answer}`;
}
