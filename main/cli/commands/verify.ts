import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { EXIT } from '../../base/errors.js';
import type { IntegrityReport } from '../../app/journal-integrity.js';
import { writeJson, writeLine } from '../io.js';

/** What the anchors add to an intact chain (J3), or nothing when there are none to speak of. */
function anchorNote(anchors: IntegrityReport['anchors']): string {
  if (anchors === null) return '';
  if (anchors.anchors === 0) return '; not anchored yet';
  const checked = anchors.keyChecked ? 'their keys checked' : 'no keys to check (they predate anchoring)';
  const older = anchors.predates === 0 ? '' : ` (events up to ${anchors.predates} predate anchoring)`;
  return `; ${anchors.anchors} anchor${anchors.anchors === 1 ? '' : 's'} up to event ${anchors.anchoredSeq} hold${older}, ${checked}`;
}

export const verifyCommand: Command = {
  name: 'verify',
  usage: 'ward verify CONVERSATION [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { namespace: COMMON_OPTIONS.namespace, json: COMMON_OPTIONS.json });
    // Read-only: verifying changes nothing, and works without a keychain (the anchors' keys then go unchecked).
    const store = app().namespaces.readOnly(values.namespace);
    const conversation = store.conversations.resolve(requirePositional(this, positionals, 0, 'a conversation id'));
    const report = await app().integrity.verify(store, conversation.id);
    if (values.json) writeJson(io.stdout, { conversation: conversation.id, ...report });
    else if (report.ok) writeLine(io.stdout, `ok: ${report.count} events, hash chain intact${anchorNote(report.anchors)}`);
    else if (report.unchecked !== null) writeLine(io.stdout, `NOT VERIFIED: ${report.count} events, hash chain intact, but ${report.unchecked}; run "ward verify" where this namespace's keychain can be read`);
    else writeLine(io.stdout, `TAMPERED: first bad event is #${report.firstBadSeq}: ${report.reason}`);
    if (report.unchecked !== null) return EXIT.unavailable;
    return report.ok ? EXIT.ok : EXIT.verifyFailed;
  },
};
