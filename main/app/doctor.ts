import fs from 'node:fs';
import path from 'node:path';
import { BlobStore } from '../changes/blobs.js';
import { describeError } from '../base/errors.js';
import type { DataFolder } from '../store/data-folder.js';
import { checkIntegrity, openDatabase, readSchemaVersion } from '../store/database.js';
import { NamespaceStore } from '../store/namespace-store.js';
import { LATEST_SCHEMA_VERSION } from '../store/migrations/index.js';

import type { DoctorCheck, DoctorProbe } from '../base/doctor-check.js';
import { probeKeychain } from '../credentials/keychain-probe.js';
import { probeClaudeManagedSettings } from '../policy/claude-managed.js';
import { probePolicy } from '../policy/doctor-probe.js';
import type { AdminPolicy } from '../policy/policy.js';
import { probePinnedCli, probeSandbox } from '../runner/doctor-probes.js';
import { COMMITTED_PIN } from '../runner/pin.js';
import { managedStore, sandboxModeFor } from './managed-settings.js';
import { probeAuditSink } from './audit.js';

export type { DoctorCheck, DoctorProbe };

export function checkDataFolder(core: DataFolder): DoctorCheck {
  if (!fs.existsSync(core.home)) {
    return { check: 'data folder', status: 'ok', detail: `${core.home} (not created yet; made on first use)`, data: { path: core.home, exists: false } };
  }
  try {
    fs.accessSync(core.home, fs.constants.W_OK | fs.constants.R_OK);
    const mode = fs.statSync(core.home).mode & 0o777;
    const loose = process.platform !== 'win32' && (mode & 0o077) !== 0;
    return {
      check: 'data folder',
      status: loose ? 'warning' : 'ok',
      detail: loose ? `${core.home} is readable by other users (mode ${mode.toString(8)}); chmod 700 it` : core.home,
      data: { path: core.home, exists: true, mode: mode.toString(8) },
    };
  } catch (error) {
    return { check: 'data folder', status: 'error', detail: `${core.home}: ${describeError(error)}`, data: { path: core.home } };
  }
}

/** Opens every namespace database on its own, so one corrupt file does not hide the others. */
export function checkNamespaces(core: DataFolder): DoctorCheck[] {
  const files = core.namespaceFiles();
  if (files.length === 0) return [{ check: 'namespaces', status: 'ok', detail: 'none yet' }];
  return files.map((file): DoctorCheck => {
    try {
      const db = openDatabase(file);
      try {
        const name = NamespaceStore.recordedName(db) ?? '(unnamed)';
        const integrity = checkIntegrity(db);
        const schema = readSchemaVersion(db);
        const conversations = (db.prepare('SELECT count(*) AS n FROM conversations').get() as { n: number }).n;
        const healthy = integrity === 'ok';
        // The file-change store (issue 26) lives next to the database.
        const changes = new BlobStore(path.join(path.dirname(file), 'changes', 'blobs')).size();
        return {
          check: `namespace ${name}`,
          status: healthy ? 'ok' : 'error',
          detail: `schema ${schema}/${LATEST_SCHEMA_VERSION}, ${conversations} conversation(s), integrity ${integrity}, file-change store ${changes.blobs} blob(s), ${changes.bytes} bytes`,
          data: { namespace: name, file, schemaVersion: schema, conversations, integrity, changeStore: changes },
        };
      } finally {
        db.close();
      }
    } catch (error) {
      return { check: `namespace database`, status: 'error', detail: describeError(error), data: { file } };
    }
  });
}

/** A probe and what it checks, in words for a terminal's "checking …" line. */
export interface NamedProbe {
  readonly what: string;
  readonly probe: DoctorProbe;
}

/** Told of each check as it finishes and of the probe that starts next, so a terminal shows progress instead of silence. */
export interface DoctorProgress {
  checking?(what: string): void;
  checked?(check: DoctorCheck): void;
}

export async function runDoctor(core: DataFolder, probes: readonly NamedProbe[], progress: DoctorProgress = {}): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const add = (found: readonly DoctorCheck[]) => {
    for (const check of found) {
      checks.push(check);
      progress.checked?.(check);
    }
  };
  add([checkDataFolder(core), ...checkNamespaces(core)]);
  for (const { what, probe } of probes) {
    progress.checking?.(what);
    try {
      const result = await probe(core);
      add(Array.isArray(result) ? result : [result]);
    } catch (error) {
      add([{ check: 'probe', status: 'error', detail: describeError(error) }]);
    }
  }
  return checks;
}

/**
 * `ward doctor`: the data folder and its namespaces, the keychain, the pinned CLI, the policy,
 * Claude Code's own managed settings and the sandbox; with `selfTest`, one offline turn of the
 * pinned CLI (it loads the broker and the MCP SDK, which plain doctor never needs).
 * `policy()` is null when the policy is broken: the policy check reports that, and the other
 * checks then go by the environment alone.
 */
export async function doctorChecks(core: DataFolder, env: NodeJS.ProcessEnv, policy: () => AdminPolicy | null, selfTest: boolean, progress?: DoctorProgress): Promise<DoctorCheck[]> {
  const probes: NamedProbe[] = [
    { what: 'the keychain', probe: (folder) => probeKeychain(folder, managedStore(policy())) },
    { what: 'the pinned CLI', probe: probePinnedCli },
    { what: 'the admin policy', probe: probePolicy(env, COMMITTED_PIN.version) },
    { what: 'Claude Code managed settings', probe: probeClaudeManagedSettings() },
    { what: 'the sandbox', probe: probeSandbox(() => sandboxModeFor(policy(), env)) },
    { what: 'the audit sink', probe: probeAuditSink(policy, core) },
  ];
  if (selfTest) probes.push({ what: 'one offline turn of the pinned CLI (self-test)', probe: (await import('./self-test.js')).probeSelfTest });
  return runDoctor(core, probes, progress);
}
