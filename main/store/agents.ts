import { createHash, randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { WardError } from '../base/errors.js';

export interface AgentVersion {
  readonly agentId: string;
  readonly agentName: string;
  readonly version: number;
  /** The published, immutable specification (instructions, tools, model profile, permissions). */
  readonly spec: unknown;
  readonly specHash: string;
  readonly publishedAt: string;
}

interface VersionRow {
  agent_id: string;
  name: string;
  version: number;
  spec: string;
  spec_hash: string;
  published_at: string;
}

const AGENT_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

function toVersion(row: VersionRow): AgentVersion {
  return {
    agentId: row.agent_id,
    agentName: row.name,
    version: row.version,
    spec: JSON.parse(row.spec) as unknown,
    specHash: row.spec_hash,
    publishedAt: row.published_at,
  };
}

const SELECT_VERSION = `SELECT v.agent_id, a.name, v.version, v.spec, v.spec_hash, v.published_at
  FROM agent_versions v JOIN agents a ON a.id = v.agent_id`;

/** Agents and their published versions; a version never changes once published (triggers enforce it). */
export class AgentRepository {
  constructor(private readonly db: Database) {}

  /** Publishes the next version of `name`, creating the agent on first publish. */
  publish(name: string, spec: unknown): AgentVersion {
    if (!AGENT_NAME.test(name)) {
      throw new WardError('usage', `invalid agent name ${JSON.stringify(name.slice(0, 70))}: use lowercase letters, digits and "-", up to 64 characters`);
    }
    const specJson = JSON.stringify(spec);
    const specHash = createHash('sha256').update(specJson).digest('hex');
    const publish = this.db.transaction(() => {
      let agent = this.db.prepare<[string], { id: string }>('SELECT id FROM agents WHERE name = ?').get(name);
      const now = new Date().toISOString();
      if (agent === undefined) {
        agent = { id: randomUUID() };
        this.db.prepare('INSERT INTO agents (id, name, created_at) VALUES (?, ?, ?)').run(agent.id, name, now);
      }
      const { next } = this.db
        .prepare<[string], { next: number }>('SELECT coalesce(max(version), 0) + 1 AS next FROM agent_versions WHERE agent_id = ?')
        .get(agent.id)!;
      this.db
        .prepare('INSERT INTO agent_versions (agent_id, version, spec, spec_hash, published_at) VALUES (?, ?, ?, ?, ?)')
        .run(agent.id, next, specJson, specHash, now);
      return next;
    });
    const version = publish.immediate();
    return this.get(name, version);
  }

  /** A specific version, or the latest when `version` is omitted. */
  get(name: string, version?: number): AgentVersion {
    const row =
      version === undefined
        ? this.db.prepare<[string], VersionRow>(`${SELECT_VERSION} WHERE a.name = ? ORDER BY v.version DESC LIMIT 1`).get(name)
        : this.db.prepare<[string, number], VersionRow>(`${SELECT_VERSION} WHERE a.name = ? AND v.version = ?`).get(name, version);
    if (row === undefined) {
      throw new WardError('not_found', version === undefined ? `no agent named ${name}` : `agent ${name} has no version ${version}`);
    }
    return toVersion(row);
  }

  find(name: string): AgentVersion | undefined {
    try {
      return this.get(name);
    } catch (error) {
      if (error instanceof WardError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  getById(agentId: string, version: number): AgentVersion {
    const row = this.db.prepare<[string, number], VersionRow>(`${SELECT_VERSION} WHERE v.agent_id = ? AND v.version = ?`).get(agentId, version);
    if (row === undefined) throw new WardError('not_found', `no agent version ${agentId}@${version}`);
    return toVersion(row);
  }

  /** The latest version of every agent. */
  list(): AgentVersion[] {
    return this.db
      .prepare<[], VersionRow>(
        `${SELECT_VERSION} WHERE v.version = (SELECT max(version) FROM agent_versions WHERE agent_id = v.agent_id) ORDER BY a.name`,
      )
      .all()
      .map(toVersion);
  }
}
