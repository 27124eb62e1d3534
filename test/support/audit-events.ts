/** A Ward app with an audit sink and a journal to fill, for the audit sink's tests (syslog and OTLP alike). */
import { expect } from 'vitest';
import { WardApp } from '../../main/app/ward-app.js';
import type { AuditTuning } from '../../main/app/audit.js';
import { parsePolicy } from '../../main/policy/policy.js';
import type { DataFolder } from '../../main/store/data-folder.js';
import type { EventInput } from '../../main/store/journal.js';
import { seedConversation } from './seed.js';

/** A prompt carrying the canary, a permission decision and a model usage, in turn. */
export function mixedAuditEvents(count: number, promptCanary: string): EventInput[] {
  return Array.from({ length: count }, (_, index) =>
    index % 3 === 0
      ? { type: 'user_prompt', payload: { text: `${promptCanary} ${index}` } }
      : index % 3 === 1
        ? { type: 'permission_decision', payload: { kind: 'net', value: 'example.com', tool: 'Bash', argumentsSummary: 'curl "x]"', decision: 'allow', answerer: { by: 'person', answer: 'once' }, reason: 'asked', via: 'approval', at: 'now', toolUseId: `tu${index}` } }
        : { type: 'usage', payload: { model: 'claude-test', inputTokens: index, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: 0.01 } },
  );
}

export interface AuditWard {
  readonly app: WardApp;
  readonly core: DataFolder;
  /** Appends `count` mixed events; returns every event hash journaled so far. */
  journal(count: number): string[];
  /** Every event's hash in the journal, the audit sink's own events included. */
  everyHash(): string[];
  /** The audit sink's changes of state the journal holds. */
  sinkEvents(): unknown[];
  backlog(): number;
  close(): Promise<void>;
}

export interface AuditWardOptions {
  readonly sink: unknown;
  readonly content?: 'metadata' | 'full';
  readonly tuning: AuditTuning;
  /** In the app's environment, where 'full' mode's redaction must find it. */
  readonly modelKey: string;
  readonly promptCanary: string;
}

export function auditWard(home: string, { sink, content, tuning, modelKey, promptCanary }: AuditWardOptions): AuditWard {
  const { core, store, conversation } = seedConversation(home);
  const policy = parsePolicy(JSON.stringify({ auditSink: sink, ...(content === undefined ? {} : { auditContent: content }) }), 'test policy');
  const app = new WardApp({ folder: core, env: { ANTHROPIC_API_KEY: modelKey }, policy, audit: tuning });
  const hashes: string[] = [];
  return {
    app,
    core,
    journal(count) {
      hashes.push(...store.journal.appendMany(conversation.id, mixedAuditEvents(count, promptCanary)).map((event) => event.hash));
      return [...hashes];
    },
    everyHash: () => [...store.journal.read(conversation.id)].map((event) => event.hash),
    sinkEvents: () => [...store.journal.read(conversation.id)].filter((event) => event.type === 'audit_sink').map((event) => event.payload),
    backlog: () => store.audit.backlog().count,
    async close() {
      await app.close();
      core.close();
    },
  };
}

/** Every journaled id arrived, none is missing, and after dropping repeated ids each is there once. */
export function expectExactlyOnceAfterDedupe(received: readonly string[], journaled: readonly string[]): void {
  expect(new Set(received).size).toBe(journaled.length);
  expect([...new Set(received)].sort()).toEqual([...journaled].sort());
}
