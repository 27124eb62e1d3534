import { escapeForDisplay, escapeOneLine } from '../../../common/display.js';
import { byToolCalls, changesSummary, conversationRewindSummary, rewindSummary } from '../../../common/file-changes.js';
import { EXIT, WardError } from '../../base/errors.js';
import type { FileChange, RewindReport } from '../../app/changes.js';
import type { ConversationRewindReport } from '../../app/conversation-rewind.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine, type CliIo } from '../io.js';

const MARK: Record<FileChange['change'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

/** One path's line: its mark, the path (escaped, D1), a mode change. */
export function changeLine(change: FileChange): string {
  const where = (name: string) => escapeOneLine(name === '' ? change.root : `${change.root}/${name}`, 1_000);
  const path = change.change === 'renamed' ? `${where(change.from!)} -> ${where(change.path)}` : where(change.path);
  const modes = change.before !== null && change.after !== null && (change.before.mode & 0o7777) !== (change.after.mode & 0o7777)
    ? ` (mode ${(change.before.mode & 0o7777).toString(8)} -> ${(change.after.mode & 0o7777).toString(8)})`
    : '';
  return `  ${MARK[change.change]} ${path}${modes}`;
}

export const changesCommand: Command = {
  name: 'changes',
  usage: 'ward changes CONVERSATION [--run ID] [--diff] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, run: { type: 'string' }, diff: { type: 'boolean', default: false } });
    const ward = app();
    // Writable: an interrupted rewind is finished (and journaled) first.
    const store = ward.namespaces.fromFlag(values.namespace);
    const { entries, toolOf } = ward.changes.list(store, requirePositional(this, positionals, 0, 'a conversation id'), values.run);
    const diffOf = (change: FileChange) => ward.changes.diff(store, change);
    if (values.json) {
      for (const entry of entries) {
        writeJson(io.stdout, 'changes' in entry && values.diff ? { ...entry, changes: entry.changes.map((change) => ({ ...change, diff: diffOf(change) })) } : entry);
      }
      return EXIT.ok;
    }
    if (entries.length === 0) writeLine(io.stdout, 'no file changes recorded');
    for (const entry of entries) {
      const run = entry.runId === null ? '' : ` run ${entry.runId}`;
      if (entry.kind === 'untracked') {
        writeLine(io.stdout, `#${entry.seq}${run}: changes not tracked: ${escapeOneLine(entry.reason, 1_000)}`);
        continue;
      }
      writeLine(io.stdout, `#${entry.seq}${run}: ${entry.kind === 'rewound' ? rewindSummary(entry) : changesSummary(entry.changes)}`);
      for (const change of entry.changes) {
        // One line per file: the run's net change to it, and the tool calls that touched it.
        const calls = 'toolUseIds' in change ? escapeOneLine(byToolCalls(change.toolUseIds, toolOf), 2_000) : '';
        writeLine(io.stdout, `${changeLine(change)}${calls}`);
        if (values.diff) io.stdout.write(escapeForDisplay(diffOf(change)));
      }
    }
    return EXIT.ok;
  },
};

export const rewindCommand: Command = {
  name: 'rewind',
  usage: 'ward rewind CONVERSATION --to RUN_OR_SEQ [--files|--conversation|--both] [--dry-run] [--force] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, {
      ...COMMON_OPTIONS,
      to: { type: 'string' },
      files: { type: 'boolean', default: false },
      conversation: { type: 'boolean', default: false },
      both: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
    });
    const conversation = requirePositional(this, positionals, 0, 'a conversation id');
    if (values.to === undefined) throw new WardError('usage', `give --to: a run id or an event's sequence number\nusage: ${this.usage}`);
    if ([values.files, values.conversation, values.both].filter(Boolean).length > 1) throw new WardError('usage', `give one of --files, --conversation, --both\nusage: ${this.usage}`);
    const ward = app();
    const store = ward.namespaces.fromFlag(values.namespace);
    const options = { force: values.force, dryRun: values['dry-run'] };
    if (values.conversation) {
      const report = await ward.conversationRewind.rewind(store, conversation, values.to, options);
      if (values.json) writeJson(io.stdout, report);
      else writeConversationReport(io, report);
      return EXIT.ok;
    }
    if (values.both) {
      const report = await ward.conversationRewind.rewindBoth(store, conversation, values.to, options);
      if (values.json) writeJson(io.stdout, report);
      else {
        writeFilesReport(io, report.files);
        writeConversationReport(io, report.conversation);
      }
      return EXIT.ok;
    }
    const report = ward.changes.rewindFiles(store, conversation, values.to, options);
    if (values.json) writeJson(io.stdout, report);
    else writeFilesReport(io, report);
    return EXIT.ok;
  },
};

function writeFilesReport(io: CliIo, report: RewindReport): void {
  const verb = report.dryRun ? 'would rewind' : `rewound (event #${report.seq}; undo with --to ${report.seq})`;
  writeLine(io.stdout, `${verb}: ${changesSummary(report.changes)} to their state before event #${report.toSeq}`);
  for (const change of report.changes) writeLine(io.stdout, changeLine(change));
  for (const path of report.forced) writeLine(io.stdout, `  forced over a conflict: ${escapeOneLine(path, 1_000)}`);
  for (const skip of report.skipped) writeLine(io.stdout, `  not restored: ${escapeOneLine(skip.path, 1_000)}: ${escapeOneLine(skip.reason, 200)}`);
}

function writeConversationReport(io: CliIo, report: ConversationRewindReport): void {
  const summary = conversationRewindSummary(report);
  writeLine(io.stdout, report.dryRun ? `would be: ${summary}` : `${summary} (event #${report.seq}; undo with --to ${report.seq})`);
  if (!report.dryRun) writeLine(io.stdout, "  the next turn's CLI session forks at that point; the session before is kept");
}
