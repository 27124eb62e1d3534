/**
 * `ward export`: a conversation as a signed bundle (E1–E3) or a readable transcript, and the
 * namespace's signing key (`ward keys`). The journal is checked before anything is written (its
 * anchors here, its chain while it streams), and every line is scanned for the secrets Ward
 * holds for the namespace; a refusal leaves no file behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJournalEvent } from '../../common/events.js';
import { WardError } from '../base/errors.js';
import { BUNDLE_EXTENSION } from '../export/bundle.js';
import { ChunkedWriter, writeBundle, writeNewFile } from '../export/bundle-writer.js';
import { exportLines } from '../export/journal-lines.js';
import { SecretScanner, type KnownSecret } from '../export/secret-scan.js';
import { changeStoreFor } from './changes.js';
import { unifiedDiff } from './change-diff.js';
import { latestRewound } from './conversation-rewind.js';
import { renderHtml, renderMarkdown, type TranscriptEvent, type TranscriptMeta } from '../export/transcript.js';
import { assertExportAllowed, type AdminPolicy } from '../policy/policy.js';
import { COMMITTED_PIN, wardVersion } from '../runner/pin.js';
import type { Conversation } from '../store/conversations.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { JournalIntegrity } from './journal-integrity.js';
import type { NamespaceKeys } from './namespace-keys.js';

export const EXPORT_FORMATS = ['bundle', 'markdown', 'html'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
const EXTENSIONS: Readonly<Record<ExportFormat, string>> = { bundle: BUNDLE_EXTENSION, markdown: '.md', html: '.html' };

export interface ExportOptions {
  readonly format: ExportFormat;
  /** Default: the conversation's id prefix and the format's extension, in the current folder. */
  readonly out?: string;
  /** N1: the statement names the namespace by its hash unless this is set. */
  readonly nameNamespace?: boolean;
}

export interface ExportResult {
  readonly file: string;
  readonly format: ExportFormat;
  readonly events: number;
  readonly bytes: number;
  /** The signing key's fingerprint (bundles only). */
  readonly signer: string | null;
  readonly uncertainRuns: readonly string[];
}

/** The recipe of docs/bundle-format.md, short: checks a bundle with Python and its `cryptography` package alone. */
export const README_RECIPE = String.raw`import base64, hashlib, json, sys, tarfile
from cryptography.hazmat.primitives.serialization import load_pem_public_key
with tarfile.open(sys.argv[1]) as tar: f = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
env = json.loads(f['statement.dsse.json']); body = base64.b64decode(env['payload']); kind = env['payloadType'].encode()
load_pem_public_key(f['signer.pub.pem']).verify(base64.b64decode(env['signatures'][0]['sig']), b'DSSEv1 %d %s %d %s' % (len(kind), kind, len(body), body))
st = json.loads(body); digests = {s['name']: s['digest']['sha256'] for s in st['subject']}
assert hashlib.sha256(f['events.sha256']).hexdigest() == digests['events.sha256'], 'events.sha256 is not what was signed'
signed = ['0' * 64] + f['events.sha256'].decode().split('\n')[:-1]
lines = f['journal.jsonl'].decode().split('\n')[:-1]
for n, line in enumerate(lines, 1):
    e = json.loads(line); jcs = json.dumps([e['conversationId'], e['seq'], e['runId'], e['type'], e['payload'], e['createdAt']], separators=(',', ':'), ensure_ascii=False)
    assert n < len(signed) and hashlib.sha256((signed[n - 1] + '\n' + jcs).encode()).hexdigest() == signed[n] == e['hash'], 'event %d is not what was signed' % n
assert len(lines) == st['predicate']['events'] == len(signed) - 1 and hashlib.sha256(f['journal.jsonl']).hexdigest() == digests['journal.jsonl']
print('ok:', len(lines), 'events, signed by the key in signer.pub.pem')
`;

function readme(conversation: Conversation, fingerprint: string): string {
  return `This is a Ward export bundle: one conversation's event journal, signed.

Files
  journal.jsonl        every event of conversation ${conversation.id}, one JSON object a line, exactly as
                       Ward journaled it ("payload" is the stored JSON text); each line's "hash" is
                       SHA-256 over the previous hash, a newline, and the RFC 8785 (JCS) JSON array
                       [conversationId, seq, runId, type, payload, createdAt].
  events.sha256        event n's hash on line n: what names an event that is not as signed.
  statement.dsse.json  a DSSE envelope holding an in-toto Statement v1: the SHA-256 of journal.jsonl and
                       of events.sha256, the number of events and the last event's hash, signed with Ed25519.
  signer.pub.pem       the public key that signed it: ${fingerprint}

Check it (no Ward data folder, keychain or network needed):
  ward verify-bundle THIS_FILE --signer ${fingerprint}
Ask the sender for their fingerprint ("ward keys show") by a channel you trust; the key inside the
bundle proves only that whoever made the bundle held that key.

Without Ward: python3 verify.py THIS_FILE, with Python's cryptography package (Debian:
python3-cryptography) and this as verify.py (the full format: docs/bundle-format.md in Ward):

${README_RECIPE}
Read it:
  ward review THIS_FILE
`;
}

export class ExportService {
  constructor(
    private readonly keys: NamespaceKeys,
    private readonly integrity: JournalIntegrity,
    private readonly policy: AdminPolicy | null,
    private readonly env: NodeJS.ProcessEnv,
    /** The data folder: transcripts show file-change diffs from the namespace's blob store. */
    private readonly home: string,
  ) {}

  async export(store: NamespaceStore, conversationRef: string, options: ExportOptions): Promise<ExportResult> {
    assertExportAllowed(this.policy, options.format);
    const conversation = store.conversations.resolve(conversationRef);
    const file = path.resolve(options.out ?? `${conversation.id.slice(0, 8)}${EXTENSIONS[options.format]}`);
    // A later append (a run still going) is not part of the export: it ends at this head.
    const head = store.journal.head(conversation.id);
    const anchors = await this.integrity.checkAnchors(store, conversation.id);
    if (anchors?.problem != null) throw new WardError('journal_invalid', `the journal of conversation ${conversation.id} fails verification (${anchors.problem.reason}); it is not exported: see "ward verify"`, {
        desktop: `The journal of conversation ${conversation.id} fails verification (${anchors.problem.reason}); it is not exported.`,
      });
    const scanner = new SecretScanner(await this.namespaceSecrets(store));
    const uncertainRuns = store.runs.listFor(conversation.id).filter((run) => run.state === 'uncertain').map((run) => run.id);
    const agent = store.agents.getById(conversation.agentId, conversation.agentVersion);
    const check = (line: string, event: { seq: number; type: string }) => scanner.check(line, event);

    if (options.format === 'bundle') {
      const key = (await this.keys.signingKey(store.namespace, true))!;
      const written = writeBundle(
        file,
        {
          conversationId: conversation.id,
          head,
          events: store.journal.stored(conversation.id, head.seq),
          check,
          predicate: {
            conversationId: conversation.id,
            title: conversation.title,
            namespaceHash: store.namespace.hash,
            ...(options.nameNamespace ? { namespace: store.namespace.name } : {}),
            agent: { name: agent.agentName, version: agent.version },
            cliVersion: COMMITTED_PIN.version,
            wardVersion: wardVersion(),
            exportedAt: new Date().toISOString(),
            uncertainRuns,
            anchoredSeq: anchors?.anchoredSeq ?? 0,
          },
        },
        key,
        readme(conversation, key.fingerprint),
      );
      return { file, format: 'bundle', events: written.events, bytes: written.bytes, signer: written.fingerprint, uncertainRuns };
    }

    const meta: TranscriptMeta = {
      title: conversation.title,
      conversationId: conversation.id,
      agent: `${agent.agentName} v${agent.version}`,
      exportedAt: new Date().toISOString(),
      events: head.seq,
      chainHead: head.hash,
      uncertainRuns,
      rewound: latestRewound(store, conversation.id),
      // E3: a diff is scanned for the namespace's secrets like every journal line.
      diffOf: (change, seq) => {
        const text = unifiedDiff(changeStoreFor(this.home, store.namespace).blobs, change);
        check(text, { seq, type: 'files_changed' });
        return text;
      },
    };
    let bytes = 0;
    writeNewFile(file, (fd) => {
      const out = new ChunkedWriter((chunk) => {
        bytes += chunk.length;
        let done = 0;
        while (done < chunk.length) done += fs.writeSync(fd, chunk, done);
      });
      const events = this.checkedEvents(store, conversation.id, head, check);
      for (const piece of options.format === 'markdown' ? renderMarkdown(meta, events) : renderHtml(meta, events)) out.write(piece);
      out.flush();
    });
    return { file, format: options.format, events: head.seq, bytes, signer: null, uncertainRuns };
  }

  /** The stored events, chain-checked and scanned like a bundle's lines, parsed by their schemas. */
  private *checkedEvents(store: NamespaceStore, conversationId: string, head: { seq: number; hash: string }, check: (line: string, event: { seq: number; type: string }) => void): Generator<TranscriptEvent> {
    for (const { event: stored } of exportLines(conversationId, head, store.journal.stored(conversationId, head.seq), check)) {
      let payload: unknown = null;
      try {
        payload = JSON.parse(stored.payload);
      } catch {
        // shown as unreadable
      }
      yield { seq: stored.seq, runId: stored.run_id, createdAt: stored.created_at, event: readJournalEvent(stored.type, payload) };
    }
  }

  /** E3: every secret of the namespace's credential store, and the model key Ward's environment gives it. */
  async namespaceSecrets(store: NamespaceStore): Promise<KnownSecret[]> {
    const secrets: KnownSecret[] = (await this.keys.secretStore(store.namespace).entries()).map(({ account, secret }) => ({ label: `credential ${account}`, value: secret }));
    for (const variable of ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'] as const) {
      const value = this.env[variable];
      if (value !== undefined && value !== '') secrets.push({ label: `${variable} in Ward's environment`, value });
    }
    return secrets;
  }
}
