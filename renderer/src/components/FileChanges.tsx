/**
 * What a turn did to the files, in the timeline (issue 26): the "N files changed" line that opens
 * the diff viewer, "Undo these changes" on it, "Restore files to before this message" on a
 * prompt, and the dialog that does either through main's ChangeService: it lists conflicts
 * (nothing changed), offers to overwrite them, and says what is never touched (.git/).
 */
import { FileDiff, Undo2 } from 'lucide-react';
import { useCallback, useMemo, useState, type ReactNode } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { RewindOutcomeView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { errorText, unwrap } from '../api.js';
import type { TimelineItem } from '../state/timeline.js';
import { Modal } from './Dialog.js';
import { DiffViewer } from './DiffViewer.js';
import '../code/changes.css';

export type ChangesItem = Extract<TimelineItem, { kind: 'changes' }>;

/** A rewind the person asked for: to before a run (its id) or an event (its number). */
export interface UndoRequest {
  readonly to: string;
  readonly title: string;
  readonly what: string;
  /** What is rewound (default: the files). */
  readonly scope?: RewindScope;
  /** The request undoes the conversation rewind journaled as event `to`. */
  readonly undoesRewind?: boolean;
}

export type RewindScope = 'files' | 'conversation' | 'both';

export function undoOfChanges(item: ChangesItem): UndoRequest {
  if (item.rewind) return { to: String(item.seq), title: 'Undo this rewind?', what: 'how they were before this rewind' };
  return { to: item.runId ?? String(item.seq), title: "Undo this turn's file changes?", what: 'how they were before this turn' };
}

const PROMPT_TITLES: Record<RewindScope, string> = {
  files: 'Restore files to before this message?',
  conversation: 'Restore the conversation to here?',
  both: 'Restore files and conversation to before this message?',
};

export function undoOfPrompt(item: Extract<TimelineItem, { kind: 'user' }>, scope: RewindScope = 'files'): UndoRequest {
  return { to: item.key.slice(1), title: PROMPT_TITLES[scope], what: 'how they were before this message', scope };
}

/** Undo of a conversation rewind: a rewind of the conversation to that rewind's event (as `ward rewind C --to SEQ --conversation`). */
export function undoOfConversationRewind(seq: number): UndoRequest {
  return { to: String(seq), title: 'Undo this rewind?', what: 'how it was before this rewind', scope: 'conversation', undoesRewind: true };
}

/** What the dialog says happens. */
function rewindWords(request: UndoRequest): ReactNode {
  if (request.undoesRewind === true)
    return (
      <>
        <p>The agent remembers the messages this rewind took back again: the next message continues from where the conversation was before the rewind.</p>
        <p>Messages sent since the rewind are rewound in turn. They stay in the journal, marked as rewound, and nothing is deleted. Files are not changed.</p>
        <p>The undo is recorded in the journal and can itself be undone.</p>
      </>
    );
  const files = (
    <p>
      Ward restores the files it tracked to {request.what}; changes made after that are undone too. Ward never writes inside a .git/ folder.
    </p>
  );
  const conversation = (
    <p>
      The agent forgets this message and everything after it: the next message continues from just before it. They stay in the journal, marked as rewound, and nothing is deleted.
    </p>
  );
  const scope = request.scope ?? 'files';
  return (
    <>
      {scope !== 'conversation' && files}
      {scope !== 'files' && conversation}
      <p>The rewind is recorded in the journal and can itself be undone.</p>
    </>
  );
}

const ACTION: Record<RewindScope, string> = { files: 'Restore files', conversation: 'Restore the conversation', both: 'Restore files and conversation' };

/** The timeline row of a change set. */
export function ChangesRow({ item, onOpen, onUndo }: { item: ChangesItem; onOpen: ((item: ChangesItem) => void) | undefined; onUndo: ((request: UndoRequest) => void) | undefined }) {
  if (onOpen === undefined || onUndo === undefined)
    return (
      <div className="turn-changes" data-testid="turn-changes">
        <FileDiff size={14} aria-hidden /> {item.text}
      </div>
    );
  return (
    <div className="turn-changes" data-testid="turn-changes">
      <button type="button" className="link-button" onClick={() => onOpen(item)} disabled={item.changes.length === 0} title="Show the diff">
        <FileDiff size={14} aria-hidden /> {item.text}
      </button>
      {item.changes.length > 0 && (
        <button type="button" className="link-button" onClick={() => onUndo(undoOfChanges(item))}>
          <Undo2 size={14} aria-hidden /> {item.rewind ? 'Undo this rewind' : 'Undo these changes'}
        </button>
      )}
    </div>
  );
}

function RewindDialog({ api, namespace, conversationId, request, onClose }: { api: WardApi; namespace: string; conversationId: string; request: UndoRequest; onClose: () => void }) {
  const [outcome, setOutcome] = useState<RewindOutcomeView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const rewind = (force: boolean) => {
    setBusy(true);
    setError(null);
    unwrap(api.changes.rewind({ namespace, conversationId, to: request.to, force, scope: request.scope ?? 'files' }))
      .then((result) => (result.outcome === 'rewound' ? onClose() : setOutcome(result)), (failure: unknown) => setError(errorText(failure)))
      .finally(() => setBusy(false));
  };
  const conflicts = outcome?.outcome === 'conflicts' ? outcome.conflicts : null;
  const description = rewindWords(request);
  return (
    <Modal open title={request.title} description={description} role="alertdialog" onClose={onClose}>
      {conflicts !== null && (
        <div role="alert" className="rewind-conflicts" data-testid="rewind-conflicts">
          <p>Nothing was changed: {conflicts.length === 1 ? 'this file has' : `these ${conflicts.length} files have`} changed since Ward recorded {conflicts.length === 1 ? 'it' : 'them'}.</p>
          <ul>
            {conflicts.slice(0, 200).map((conflict) => (
              <li key={conflict.path}>
                {escapeLineForWindow(conflict.path, 300)} ({conflict.now})
              </li>
            ))}
          </ul>
        </div>
      )}
      {error !== null && (
        <p role="alert" className="changes-error">
          {error}
        </p>
      )}
      <div className="modal-actions">
        <button type="button" onClick={onClose} data-autofocus>
          Cancel
        </button>
        {conflicts === null ? (
          <button type="button" className="primary" disabled={busy} onClick={() => rewind(false)}>
            {request.undoesRewind === true ? 'Undo the rewind' : ACTION[request.scope ?? 'files']}
          </button>
        ) : (
          <button type="button" className="danger solid" disabled={busy} onClick={() => rewind(true)}>
            Overwrite them and restore
          </button>
        )}
      </div>
    </Modal>
  );
}

/** The viewer and undo state of one chat: what the rows call, and the dialogs to render. */
export function useFileChanges(api: WardApi, namespace: string, conversationId: string, items: readonly TimelineItem[]) {
  const [viewing, setViewing] = useState<ChangesItem | null>(null);
  const [undo, setUndo] = useState<UndoRequest | null>(null);
  // Prompts with tracked changes after them offer "Restore files to before this message".
  const restorable = useMemo(() => {
    const keys = new Set<string>();
    let later = false;
    for (let index = items.length - 1; index >= 0; index--) {
      const item = items[index]!;
      if (item.kind === 'changes' && item.changes.length > 0) later = true;
      else if (item.kind === 'user' && later) keys.add(item.key);
    }
    return keys;
  }, [items]);
  const closeViewer = useCallback(() => setViewing(null), []);
  const fileActions = useMemo(() => ({ restorable, onOpenChanges: setViewing, onUndo: setUndo }), [restorable]);
  const dialogs = (
    <>
      {viewing !== null && <DiffViewer api={api} namespace={namespace} conversationId={conversationId} seq={viewing.seq} title={viewing.text} onClose={closeViewer} />}
      {undo !== null && <RewindDialog api={api} namespace={namespace} conversationId={conversationId} request={undo} onClose={() => setUndo(null)} />}
    </>
  );
  return { fileActions, dialogs };
}
