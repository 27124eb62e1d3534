import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, readSchemaVersion } from '../../main/store/database.js';
import { tempDir } from '../support/temp.js';

describe('migration 3 (connections)', () => {
  it('test_upgrades_a_version_2_database_in_place_keeping_its_rows_and_adds_the_connection_tables', () => {
    const file = path.join(tempDir(), 'ward.db');
    const old = openDatabase(file, { targetVersion: 2 });
    old.prepare("INSERT INTO meta (key, value) VALUES ('namespace', 'default')").run();
    old.prepare("INSERT INTO agents (id, name, created_at) VALUES ('a1', 'helper', '2026-01-01T00:00:00Z')").run();
    expect(old.prepare("SELECT name FROM sqlite_master WHERE name = 'connections'").get()).toBeUndefined();
    old.close();

    const db = openDatabase(file);
    expect(readSchemaVersion(db)).toBeGreaterThanOrEqual(3);
    expect(db.prepare("SELECT name FROM agents WHERE id = 'a1'").get()).toEqual({ name: 'helper' });
    db.prepare("INSERT INTO connections (name, transport, command, created_at) VALUES ('files', 'stdio', '/usr/bin/true', 'now')").run();
    db.prepare("INSERT INTO connection_tools (connection, name, description, input_schema, schema_hash, pinned_at) VALUES ('files', 'read', '', '{}', 'h', 'now')").run();
    expect(db.prepare('SELECT enabled, status FROM connection_tools').get()).toEqual({ enabled: 1, status: 'pinned' });
    db.close();
  });

  it('test_refuses_rows_that_mix_transports_or_name_an_unknown_one_fails_closed', () => {
    const db = openDatabase(path.join(tempDir(), 'ward.db'));
    const insert = db.prepare('INSERT INTO connections (name, transport, command, url, created_at) VALUES (?, ?, ?, ?, ?)');
    expect(() => insert.run('a', 'stdio', '/bin/x', 'https://x', 'now')).toThrow(/CHECK constraint/);
    expect(() => insert.run('b', 'http', null, null, 'now')).toThrow(/CHECK constraint/);
    expect(() => insert.run('c', 'sse', null, 'https://x', 'now')).toThrow(/CHECK constraint/);
    db.close();
  });
});

describe('migration 5 (pre-registered clients, the scope to ask for, output schemas)', () => {
  it('test_upgrades_a_version_4_database_keeping_connections_and_pins_with_no_client_scope_or_output_schema', () => {
    const file = path.join(tempDir(), 'ward.db');
    const old = openDatabase(file, { targetVersion: 4 });
    old.prepare("INSERT INTO connections (name, transport, url, created_at) VALUES ('remote', 'http', 'https://mcp.example.com/mcp', 'now')").run();
    old.prepare("INSERT INTO connection_tools (connection, name, description, input_schema, schema_hash, pinned_at) VALUES ('remote', 'echo', '', '{}', 'h', 'now')").run();
    old.close();

    const db = openDatabase(file);
    expect(readSchemaVersion(db)).toBeGreaterThanOrEqual(5);
    expect(db.prepare('SELECT url, client_id, scope, wanted_scope FROM connections').get()).toEqual({ url: 'https://mcp.example.com/mcp', client_id: null, scope: null, wanted_scope: null });
    expect(db.prepare('SELECT schema_hash, output_schema FROM connection_tools').get()).toEqual({ schema_hash: 'h', output_schema: null });
    const setScope = db.prepare("UPDATE connections SET scope = ? WHERE name = 'remote'");
    expect(() => setScope.run('x'.repeat(1025))).toThrow(/CHECK constraint/);
    expect(() => setScope.run('')).toThrow(/CHECK constraint/);
    db.close();
  });
});

describe('migration 8 (a stdio server in the sandbox, S5)', () => {
  it('test_upgrades_a_version_7_database_its_servers_stay_unconfined_and_a_sandbox_setting_must_be_bounded_json', () => {
    const file = path.join(tempDir(), 'ward.db');
    const old = openDatabase(file, { targetVersion: 7 });
    old.prepare("INSERT INTO connections (name, transport, command, created_at) VALUES ('files', 'stdio', '/usr/bin/true', 'now')").run();
    old.close();

    const db = openDatabase(file);
    expect(readSchemaVersion(db)).toBeGreaterThanOrEqual(8);
    expect(db.prepare('SELECT command, sandbox FROM connections').get()).toEqual({ command: '/usr/bin/true', sandbox: null });
    const setSandbox = db.prepare("UPDATE connections SET sandbox = ? WHERE name = 'files'");
    expect(() => setSandbox.run('not json')).toThrow(/CHECK constraint/);
    expect(() => setSandbox.run(JSON.stringify({ net: ['x'.repeat(70_000)], folder: null }))).toThrow(/CHECK constraint/);
    setSandbox.run(JSON.stringify({ net: ['docs.example.com'], folder: null }));
    db.close();
  });
});
