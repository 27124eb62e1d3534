/**
 * An OTLP/HTTP log receiver for the audit sink's tests: node:https on a loopback port with a
 * certificate from the test CA, decoding each ExportLogsServiceRequest with protobufjs from the
 * official OpenTelemetry .proto files, vendored in test/fixtures/opentelemetry-proto (see its
 * README). A field the exporter wrote under another number than the definitions say is not read
 * into the record, so the tests' expectations fail. No OpenTelemetry Collector runs here.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import protobuf from 'protobufjs';

export type AnyValue = string | number | boolean | AnyValue[] | { [key: string]: AnyValue } | Uint8Array | null;

export interface DecodedRecord {
  readonly timeUnixNano: bigint;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly eventName: string;
  readonly body: AnyValue;
  readonly attributes: Record<string, AnyValue>;
  readonly resource: Record<string, AnyValue>;
  readonly scope: { readonly name: string; readonly version: string };
}

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly status: number;
  readonly records: readonly DecodedRecord[];
}

const PROTO_ROOT = path.resolve(import.meta.dirname, '..', 'fixtures', 'opentelemetry-proto');

/** The .proto files import each other by paths from the repository's root: resolved in the vendored copy. */
function loadRequestType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_ROOT, target);
  root.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto');
  return root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
}

const REQUEST = loadRequestType();

/** common.proto's messages as protobufjs's toObject gives them (64-bit integers as decimal strings). */
interface PbAnyValue {
  readonly value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly intValue?: string;
  readonly doubleValue?: number;
  readonly arrayValue?: { readonly values?: readonly PbAnyValue[] };
  readonly kvlistValue?: { readonly values?: readonly PbKeyValue[] };
  readonly bytesValue?: Uint8Array;
}
interface PbKeyValue {
  readonly key: string;
  readonly value?: PbAnyValue;
}
interface PbLogRecord {
  readonly timeUnixNano: string;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly eventName: string;
  readonly body?: PbAnyValue;
  readonly attributes?: readonly PbKeyValue[];
}
interface PbRequest {
  readonly resourceLogs?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: readonly PbKeyValue[] };
    readonly scopeLogs?: ReadonlyArray<{ readonly scope?: { readonly name: string; readonly version: string }; readonly logRecords?: readonly PbLogRecord[] }>;
  }>;
}

function anyValue(value: PbAnyValue | undefined): AnyValue {
  if (value?.value === undefined) return null;
  switch (value.value) {
    case 'intValue':
      return Number(value.intValue);
    case 'arrayValue':
      return (value.arrayValue?.values ?? []).map(anyValue);
    case 'kvlistValue':
      return keyValues(value.kvlistValue?.values);
    default:
      return value[value.value] ?? null;
  }
}

function keyValues(list: readonly PbKeyValue[] | undefined): Record<string, AnyValue> {
  return Object.fromEntries((list ?? []).map((pair) => [pair.key, anyValue(pair.value)]));
}

/** The log records of one request body, each with its resource's and scope's attributes. */
export function decodeExportLogsRequest(buf: Uint8Array): DecodedRecord[] {
  const request = REQUEST.toObject(REQUEST.decode(buf), { longs: String, enums: Number, defaults: true, oneofs: true }) as PbRequest;
  return (request.resourceLogs ?? []).flatMap((resourceLogs) => {
    const resource = keyValues(resourceLogs.resource?.attributes);
    return (resourceLogs.scopeLogs ?? []).flatMap((scopeLogs) => {
      const scope = { name: scopeLogs.scope?.name ?? '', version: scopeLogs.scope?.version ?? '' };
      return (scopeLogs.logRecords ?? []).map((record) => ({
        timeUnixNano: BigInt(record.timeUnixNano),
        severityNumber: record.severityNumber,
        severityText: record.severityText,
        eventName: record.eventName,
        body: anyValue(record.body),
        attributes: keyValues(record.attributes),
        resource,
        scope,
      }));
    });
  });
}

export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly server: https.Server;
  port = 0;

  /** `answer(n)`: the HTTP status of the n-th request (from 0); default 200. */
  constructor(
    cert: { certFile: string; keyFile: string },
    private readonly answer: (index: number) => number = () => 200,
  ) {
    this.server = https.createServer({ cert: fs.readFileSync(cert.certFile), key: fs.readFileSync(cert.keyFile) }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        const status = this.answer(this.requests.length);
        this.requests.push({ path: request.url ?? '', headers: request.headers, raw, status, records: decodeExportLogsRequest(raw) });
        response.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Serves another certificate from the next connection on. */
  useCertificate(cert: { certFile: string; keyFile: string }): void {
    this.server.setSecureContext({ cert: fs.readFileSync(cert.certFile), key: fs.readFileSync(cert.keyFile) });
  }

  /** The records of every request answered 2xx: what a collector took. */
  accepted(): DecodedRecord[] {
    return this.requests.filter((request) => request.status < 300).flatMap((request) => request.records);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
