/**
 * An OTLP/HTTP log receiver for the audit sink's tests: node:https on a loopback port with a
 * certificate from the test CA, decoding each ExportLogsServiceRequest with the field numbers of
 * the OpenTelemetry proto definitions (opentelemetry/proto/collector/logs/v1/logs_service.proto,
 * logs/v1/logs.proto, common/v1/common.proto, resource/v1/resource.proto). No package here ships
 * those .proto files or a request decoder; the wire reading is the OpenTelemetry JS SDK's own
 * ProtobufReader (otlp-transformer, which the exporter uses to read responses).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { ProtobufReader } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/protobuf-reader.js';

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

/** Calls `visit` for each field of one message; `reader` is positioned at the field's value. */
function fields(buf: Uint8Array, visit: (field: number, wire: number, reader: ProtobufReader) => boolean | void): void {
  const reader = new ProtobufReader(buf);
  while (!reader.isAtEnd()) {
    const { fieldNumber, wireType } = reader.readTag();
    if (visit(fieldNumber, wireType, reader) !== true) reader.skip(wireType);
  }
}

/** A fixed64 at the reader's position (the reader has no fixed64 method: the SDK never reads one). */
function fixed64(buf: Uint8Array, reader: ProtobufReader): Buffer {
  const bytes = Buffer.from(buf.buffer, buf.byteOffset + reader.pos, 8);
  reader.pos += 8;
  return bytes;
}

/** common.proto AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue, 6 KeyValueList, 7 bytes. */
function anyValue(buf: Uint8Array): AnyValue {
  let value: AnyValue = null;
  fields(buf, (field, _wire, reader) => {
    if (field === 1) value = reader.readString();
    else if (field === 2) value = reader.readVarint() !== 0;
    else if (field === 3) value = reader.readVarint();
    else if (field === 4) value = fixed64(buf, reader).readDoubleLE();
    else if (field === 5) {
      const items: AnyValue[] = [];
      fields(reader.readBytes(), (inner, _w, r) => (inner === 1 ? (items.push(anyValue(r.readBytes())), true) : false));
      value = items;
    } else if (field === 6) value = keyValues(reader.readBytes(), 1);
    else if (field === 7) value = reader.readBytes();
    else return false;
    return true;
  });
  return value;
}

/** The repeated KeyValue (1 key, 2 value) at `field` of a message. */
function keyValues(buf: Uint8Array, field: number): Record<string, AnyValue> {
  const map: Record<string, AnyValue> = {};
  fields(buf, (at, _wire, reader) => {
    if (at !== field) return false;
    let key = '';
    let value: AnyValue = null;
    fields(reader.readBytes(), (inner, _w, r) => {
      if (inner === 1) key = r.readString();
      else if (inner === 2) value = anyValue(r.readBytes());
      else return false;
      return true;
    });
    map[key] = value;
    return true;
  });
  return map;
}

/** logs.proto LogRecord: 1 time_unix_nano, 2 severity_number, 3 severity_text, 5 body, 6 attributes, 12 event_name. */
function logRecord(buf: Uint8Array, resource: Record<string, AnyValue>, scope: DecodedRecord['scope']): DecodedRecord {
  const record = { timeUnixNano: 0n, severityNumber: 0, severityText: '', eventName: '', body: null as AnyValue, attributes: keyValues(buf, 6), resource, scope };
  fields(buf, (field, _wire, reader) => {
    if (field === 1) record.timeUnixNano = fixed64(buf, reader).readBigUInt64LE();
    else if (field === 2) record.severityNumber = reader.readVarint();
    else if (field === 3) record.severityText = reader.readString();
    else if (field === 5) record.body = anyValue(reader.readBytes());
    else if (field === 12) record.eventName = reader.readString();
    else return false;
    return true;
  });
  return record;
}

/** ExportLogsServiceRequest 1 → ResourceLogs (1 Resource{1 attributes}, 2 ScopeLogs{1 scope{1 name, 2 version}, 2 log_records}). */
export function decodeExportLogsRequest(buf: Uint8Array): DecodedRecord[] {
  const records: DecodedRecord[] = [];
  fields(buf, (field, _wire, reader) => {
    if (field !== 1) return false;
    const resourceLogs = reader.readBytes();
    let resource: Record<string, AnyValue> = {};
    fields(resourceLogs, (inner, _w, r) => (inner === 1 ? ((resource = keyValues(r.readBytes(), 1)), true) : false));
    fields(resourceLogs, (inner, _w, r) => {
      if (inner !== 2) return false;
      const scopeLogs = r.readBytes();
      const scope = { name: '', version: '' };
      fields(scopeLogs, (at, _x, s) => {
        if (at === 1) fields(s.readBytes(), (f, _y, t) => (f === 1 ? ((scope.name = t.readString()), true) : f === 2 ? ((scope.version = t.readString()), true) : false));
        else if (at === 2) records.push(logRecord(s.readBytes(), resource, scope));
        else return false;
        return true;
      });
      return true;
    });
    return true;
  });
  return records;
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
