import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { EXIT } from '../../base/errors.js';
import type { IntegrityReport } from '../../app/journal-integrity.js';
import { writeJson, writeLine } from '../io.js';

/** What the anchors add to an intact chain (J3), or nothing when there are none to speak of. */
function anchorNote(anchors: IntegrityReport['anchors']): string {
  if (anchors === null) return '';
  if (anchors.anchors === 0) return '; not anchored yet';
  const checked = anchors.keyChecked ? 'their keys checked' : `their keys NOT checked: ${anchors.keyProblem ?? 'no key'}`;
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
    else writeLine(io.stdout, `TAMPERED: first bad event is #${report.firstBadSeq}: ${report.reason}`);
    return report.ok ? EXIT.ok : EXIT.verifyFailed;
  },
};
