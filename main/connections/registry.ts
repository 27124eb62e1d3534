/**
 * The connection registry of one namespace (N1): connections and their pinned tools, in the
 * namespace database. Public metadata only (C4).
 */
import type { Database } from 'better-sqlite3';
import { WardError } from '../base/errors.js';
import type { JsonSchema } from '../upstreams/types.js';
import { parseConnectionName, parseConnectionSpec, type ConnectionSpec, type ServerSandbox } from './config.js';
import { toolSchemaHash } from '../upstreams/schema-hash.js';
import type { LiveTool } from '../upstreams/session.js';
import { wardCommand, type Namespace } from '../namespaces/namespace.js';
import { ON_CONNECTIONS } from '../../common/desktop-errors.js';

export type ConnectionHealth = 'unknown' | 'ok' | 'error' | 'not_signed_in';
export type ToolStatus = 'pinned' | 'schema_changed' | 'missing';

export interface ConnectionRecord {
  readonly spec: ConnectionSpec;
  /** The scope the last sign-in asked for; null when it named none (or before the first). */
  readonly scope: string | null;
  /** Scope the server asked for since (insufficient_scope) beyond `scope`: the next sign-in asks for it too (step-up). */
  readonly wantedScope: string | null;
  readonly health: ConnectionHealth;
  /** Stable code of the last failure (unreachable, not_signed_in, protocol_error, ...), null when healthy. */
  readonly lastErrorCode: string | null;
  readonly checkedAt: string | null;
  readonly createdAt: string;
}

export interface ToolPin {
  readonly connection: string;
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** Pinned with the input schema and covered by the same hash (B3). */
  readonly outputSchema?: JsonSchema;
  readonly schemaHash: string;
  readonly enabled: boolean;
  /** `schema_changed` and `missing` tools are refused until re-pinned (B3). */
  readonly status: ToolStatus;
  readonly reason: string | null;
  readonly pinnedAt: string;
}

interface ConnectionRow {
  name: string;
  transport: 'stdio' | 'http';
  command: string | null;
  args: string;
  url: string | null;
  allow_insecure_http: number;
  secret_env: string;
  client_id: string | null;
  sandbox: string | null;
  scope: string | null;
  wanted_scope: string | null;
  health: ConnectionHealth;
  last_error_code: string | null;
  checked_at: string | null;
  created_at: string;
}

interface ToolRow {
  connection: string;
  name: string;
  description: string;
  input_schema: string;
  output_schema: string | null;
  schema_hash: string;
  enabled: number;
  status: ToolStatus;
  reason: string | null;
  pinned_at: string;
}

function toRecord(row: ConnectionRow): ConnectionRecord {
  // Rows are re-validated on the way out: a hand-edited database fails closed (L1).
  const spec =
    row.transport === 'stdio'
      ? parseConnectionSpec({ transport: 'stdio', name: row.name, command: row.command, args: JSON.parse(row.args) as unknown, secretEnv: JSON.parse(row.secret_env) as unknown, sandbox: row.sandbox === null ? null : (JSON.parse(row.sandbox) as unknown) })
      : parseConnectionSpec({ transport: 'http', name: row.name, url: row.url, allowInsecureHttp: row.allow_insecure_http === 1, clientId: row.client_id });
  return { spec, scope: row.scope, wantedScope: row.wanted_scope, health: row.health, lastErrorCode: row.last_error_code, checkedAt: row.checked_at, createdAt: row.created_at };
}

function toPin(row: ToolRow): ToolPin {
  return {
    connection: row.connection,
    name: row.name,
    description: row.description,
    inputSchema: JSON.parse(row.input_schema) as JsonSchema,
    ...(row.output_schema === null ? {} : { outputSchema: JSON.parse(row.output_schema) as JsonSchema }),
    schemaHash: row.schema_hash,
    enabled: row.enabled === 1,
    status: row.status,
    reason: row.reason,
    pinnedAt: row.pinned_at,
  };
}

function outputSchemaText(tool: LiveTool): string | null {
  return tool.outputSchema === undefined ? null : JSON.stringify(tool.outputSchema);
}

/** Why a tool is disabled after its schema changed, with the exact command that re-pins it. */
function schemaChangedReason(ns: Namespace, connection: string, tool: string): string {
  return `its input schema changed upstream since it was pinned; re-pin it with ${wardCommand(ns, `connections tools ${connection} --repin ${tool}`)}`;
}
export const MISSING_REASON = 'the server no longer offers it';

export class ConnectionRegistry {
  constructor(
    private readonly db: Database,
    /** The namespace whose database this is, named in the commands hints give. */
    readonly namespace: Namespace,
  ) {}

  add(spec: ConnectionSpec): ConnectionRecord {
    const checked = parseConnectionSpec(spec);
    const now = new Date().toISOString();
    try {
      if (checked.transport === 'stdio') {
        this.db
          .prepare("INSERT INTO connections (name, transport, command, args, secret_env, sandbox, created_at) VALUES (?, 'stdio', ?, ?, ?, ?, ?)")
          .run(checked.name, checked.command, JSON.stringify(checked.args), JSON.stringify(checked.secretEnv), checked.sandbox === null ? null : JSON.stringify(checked.sandbox), now);
      } else {
        this.db
          .prepare("INSERT INTO connections (name, transport, url, allow_insecure_http, client_id, created_at) VALUES (?, 'http', ?, ?, ?, ?)")
          .run(checked.name, checked.url, checked.allowInsecureHttp ? 1 : 0, checked.clientId, now);
      }
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new WardError('usage', `a connection named ${checked.name} already exists; remove it first`, { cause: error });
      }
      throw error;
    }
    return this.get(checked.name);
  }

  get(name: string): ConnectionRecord {
    const row = this.db.prepare<[string], ConnectionRow>('SELECT * FROM connections WHERE name = ?').get(parseConnectionName(name));
    if (row === undefined) throw new WardError('not_found', `no connection named ${name}`);
    return toRecord(row);
  }

  has(name: string): boolean {
    return this.db.prepare('SELECT 1 FROM connections WHERE name = ?').get(name) !== undefined;
  }

  list(): ConnectionRecord[] {
    return this.db.prepare<[], ConnectionRow>('SELECT * FROM connections ORDER BY name').all().map(toRecord);
  }

  /** Sets how a local server is confined (the admin policy's profile for a managed one); its tools stay pinned. */
  setSandbox(name: string, sandbox: ServerSandbox | null): void {
    this.db.prepare("UPDATE connections SET sandbox = ? WHERE name = ? AND transport = 'stdio'").run(sandbox === null ? null : JSON.stringify(sandbox), parseConnectionName(name));
  }

  /** Removes the connection and (by cascade) its pins; true when it existed. */
  remove(name: string): boolean {
    return this.db.prepare('DELETE FROM connections WHERE name = ?').run(parseConnectionName(name)).changes > 0;
  }

  setHealth(name: string, health: ConnectionHealth, errorCode: string | null): void {
    this.db
      .prepare('UPDATE connections SET health = ?, last_error_code = ?, checked_at = ? WHERE name = ?')
      .run(health, errorCode, new Date().toISOString(), name);
  }

  /** A sign-in succeeded asking for `scope`: what the server wanted beyond the old one is now asked for. */
  signedIn(name: string, scope: string | null): void {
    this.db.prepare('UPDATE connections SET scope = ?, wanted_scope = NULL WHERE name = ?').run(scope, name);
  }

  /** The server asked for more than the last sign-in did (checked by main/connections/challenge.ts). */
  setWantedScope(name: string, scope: string): void {
    this.db.prepare('UPDATE connections SET wanted_scope = ? WHERE name = ?').run(scope, name);
  }

  tools(connection: string): ToolPin[] {
    return this.db.prepare<[string], ToolRow>('SELECT * FROM connection_tools WHERE connection = ? ORDER BY name').all(connection).map(toPin);
  }

  /** What a call checks (B3, B4), without reading the schema itself: it runs on every tool call. */
  pinState(connection: string, name: string): Pick<ToolPin, 'schemaHash' | 'enabled' | 'status' | 'reason'> | undefined {
    const row = this.db
      .prepare<[string, string], Pick<ToolRow, 'schema_hash' | 'enabled' | 'status' | 'reason'>>(
        'SELECT schema_hash, enabled, status, reason FROM connection_tools WHERE connection = ? AND name = ?',
      )
      .get(connection, name);
    return row === undefined ? undefined : { schemaHash: row.schema_hash, enabled: row.enabled === 1, status: row.status, reason: row.reason };
  }

  tool(connection: string, name: string): ToolPin | undefined {
    const row = this.db.prepare<[string, string], ToolRow>('SELECT * FROM connection_tools WHERE connection = ? AND name = ?').get(connection, name);
    return row === undefined ? undefined : toPin(row);
  }

  /**
   * Records what the upstream offers now: new tools are pinned as listed; a pinned tool whose
   * schema hash differs is marked schema_changed (B3) and keeps its old pin until re-pinned; a
   * tool that disappeared is marked missing. Returns the pins after the update.
   */
  sync(connection: string, live: readonly LiveTool[]): ToolPin[] {
    const now = new Date().toISOString();
    const update = this.db.transaction(() => {
      const pinned = new Map(this.tools(connection).map((pin) => [pin.name, pin]));
      const insert = this.db.prepare(
        'INSERT INTO connection_tools (connection, name, description, input_schema, output_schema, schema_hash, pinned_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      const mark = this.db.prepare('UPDATE connection_tools SET status = ?, reason = ? WHERE connection = ? AND name = ?');
      for (const tool of live) {
        const pin = pinned.get(tool.name);
        pinned.delete(tool.name);
        if (pin === undefined) insert.run(connection, tool.name, tool.description, JSON.stringify(tool.inputSchema), outputSchemaText(tool), tool.schemaHash, now);
        else if (pin.schemaHash !== tool.schemaHash) mark.run('schema_changed', schemaChangedReason(this.namespace, connection, tool.name), connection, tool.name);
        else if (pin.status !== 'pinned') mark.run('pinned', null, connection, tool.name);
      }
      for (const gone of pinned.values()) mark.run('missing', MISSING_REASON, connection, gone.name);
    });
    update.immediate();
    return this.tools(connection);
  }

  /** Pins the tool as the upstream lists it now, clearing a schema_changed mark. */
  repin(connection: string, tool: LiveTool): ToolPin {
    if (tool.schemaHash !== toolSchemaHash(tool)) throw new WardError('internal', 'schema hash does not match the schema');
    const changed = this.db
      .prepare(
        "UPDATE connection_tools SET description = ?, input_schema = ?, output_schema = ?, schema_hash = ?, status = 'pinned', reason = NULL, pinned_at = ? WHERE connection = ? AND name = ?",
      )
      .run(tool.description, JSON.stringify(tool.inputSchema), outputSchemaText(tool), tool.schemaHash, new Date().toISOString(), connection, tool.name).changes;
    if (changed === 0) throw new WardError('not_found', `connection ${connection} has no tool named ${tool.name}`);
    return this.tool(connection, tool.name)!;
  }

  setEnabled(connection: string, name: string, enabled: boolean): ToolPin {
    const changed = this.db.prepare('UPDATE connection_tools SET enabled = ? WHERE connection = ? AND name = ?').run(enabled ? 1 : 0, connection, name).changes;
    if (changed === 0) throw new WardError('not_found', `connection ${connection} has no tool named ${JSON.stringify(name.slice(0, 64))}; run "ward connections tools ${connection}" to list them`, {
        desktop: `Connection ${connection} has no tool named ${JSON.stringify(name.slice(0, 64))}; its tools are listed ${ON_CONNECTIONS}.`,
      });
    return this.tool(connection, name)!;
  }
}
