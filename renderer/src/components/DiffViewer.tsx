/**
 * The diff viewer of one change set (issue 26): its files with what happened to each and their
 * line counts, and the open file's unified diff, highlighted with the same highlighter as code
 * blocks. One request opens it (`changes.open`: the files and the first file's first screen of
 * lines); the rest of that diff is fetched once those are painted, and each other file's diff when
 * it is opened (`changes.diff`). A file whose bytes Ward did not keep (deny-read, over the size
 * cap, binary) says so and has no content to fetch.
 * Unified or side by side (a toggle, remembered); either way the diff shows only the changed lines
 * and three around them, each hunk saying how many unchanged lines it leaves out.
 * Keyboard: it opens with focus on the file list, ↑/↓ move between files, Escape closes.
 */
import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ChangedFileView, ChangeSetView, FileDiffView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { errorText, unwrap } from '../api.js';
import { languageOfPath } from '../code/highlight.js';
import { Modal } from './Dialog.js';
import { DiffLines } from './DiffLines.js';

export interface DiffViewerProps {
  readonly api: WardApi;
  readonly namespace: string;
  readonly conversationId: string;
  /** The change set's first event. */
  readonly seq: number;
  readonly title: string;
  readonly onClose: () => void;
}

const CHANGE_WORDS: Readonly<Record<ChangedFileView['change'], string>> = { added: 'added', modified: 'modified', deleted: 'deleted', renamed: 'renamed' };

function Counts({ file }: { file: ChangedFileView }) {
  if (file.notShown !== null) return <span className="diff-counts muted">content not kept</span>;
  if (file.added === null || file.removed === null) return null;
  return (
    <span className="diff-counts">
      <span className="diff-plus">+{file.added}</span> <span className="diff-minus">−{file.removed}</span>
    </span>
  );
}

const LAYOUT_KEY = 'ward.diffLayout';

/** Unified or side by side, remembered across openings. */
function useSplit(): readonly [boolean, (split: boolean) => void] {
  const [split, setSplit] = useState(() => localStorage.getItem(LAYOUT_KEY) === 'split');
  const choose = (next: boolean) => {
    localStorage.setItem(LAYOUT_KEY, next ? 'split' : 'unified');
    setSplit(next);
  };
  return [split, choose];
}

function LayoutToggle({ split, onSplit }: { split: boolean; onSplit: (split: boolean) => void }) {
  return (
    <div className="diff-layout" role="group" aria-label="Diff layout">
      <button type="button" aria-pressed={!split} onClick={() => onSplit(false)}>
        Unified
      </button>
      <button type="button" aria-pressed={split} onClick={() => onSplit(true)}>
        Side by side
      </button>
    </div>
  );
}

function FileDiff({ diff, path }: { diff: FileDiffView | null; path: string }) {
  const [split, setSplit] = useSplit();
  if (diff === null) return <div className="diff-empty">Loading…</div>;
  const shown = diff.lines !== null && diff.lines.length > 0;
  return (
    <>
      <div className="diff-toolbar">
        <div className="diff-header">{escapeLineForWindow(diff.header, 400)}</div>
        {shown && <LayoutToggle split={split} onSplit={setSplit} />}
      </div>
      {diff.lines === null ? (
        <div className="diff-empty" data-testid="diff-not-kept">
          Content not kept ({escapeLineForWindow(diff.notShown ?? '', 100)}): Ward records this file by its size and hash only.
        </div>
      ) : diff.lines.length === 0 ? (
        <div className="diff-empty">No change to the content (only its mode or time).</div>
      ) : (
        <DiffLines lines={diff.lines} total={diff.totalLines} language={languageOfPath(path)} split={split} />
      )}
    </>
  );
}

export function DiffViewer({ api, namespace, conversationId, seq, title, onClose }: DiffViewerProps) {
  const [files, setFiles] = useState<readonly ChangedFileView[] | null>(null);
  const [selected, setSelected] = useState(0);
  const [diffs, setDiffs] = useState<ReadonlyMap<number, FileDiffView>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const list = useRef<HTMLUListElement>(null);

  const fetchDiff = useCallback(
    (index: number) =>
      unwrap(api.changes.diff({ namespace, conversationId, seq, index })).then(
        (diff) => setDiffs((current) => new Map(current).set(index, diff)),
        (failure: unknown) => setError(errorText(failure)),
      ),
    [api, namespace, conversationId, seq],
  );
  useEffect(() => {
    let mounted = true;
    const opened = (set: ChangeSetView) => {
      // For bench/diff-viewer.ts: the renderer's share of opening a diff starts here.
      performance.mark('ward:diff-received');
      setFiles(set.files);
      const first = set.first;
      if (first === null) return;
      setDiffs((current) => new Map(current).set(0, first));
      // The rest of the first diff once its first screen is painted (a frame, then a task).
      if (first.lines !== null && first.lines.length < first.totalLines) requestAnimationFrame(() => setTimeout(() => mounted && void fetchDiff(0)));
    };
    unwrap(api.changes.open({ namespace, conversationId, seq })).then(opened, (failure: unknown) => setError(errorText(failure)));
    return () => {
      mounted = false;
    };
  }, [api, namespace, conversationId, seq, fetchDiff]);
  const file = files?.[selected];
  useEffect(() => {
    if (file !== undefined && !diffs.has(file.index)) void fetchDiff(file.index);
  }, [file, diffs, fetchDiff]);
  useEffect(() => {
    if (files !== null) list.current?.querySelector<HTMLElement>('[aria-current="true"]')?.focus();
  }, [files]);

  const move = (event: KeyboardEvent) => {
    if (files === null || (event.key !== 'ArrowDown' && event.key !== 'ArrowUp')) return;
    event.preventDefault();
    const next = Math.max(0, Math.min(files.length - 1, selected + (event.key === 'ArrowDown' ? 1 : -1)));
    setSelected(next);
    list.current?.querySelectorAll<HTMLElement>('button')[next]?.focus();
  };

  return (
    <Modal open title={title} className="diff-viewer" onClose={onClose}>
      {error !== null && (
        <p role="alert" className="changes-error">
          {error}
        </p>
      )}
      <div className="diff-body">
        <ul className="diff-files" aria-label="Changed files" ref={list} onKeyDown={move}>
          {(files ?? []).map((entry) => (
            <li key={entry.index}>
              <button type="button" aria-current={entry.index === selected} className="diff-file" onClick={() => setSelected(entry.index)}>
                <span className={`diff-kind diff-kind-${entry.change}`}>{CHANGE_WORDS[entry.change]}</span>
                <span className="diff-path">
                  {entry.from === null ? '' : `${escapeLineForWindow(entry.from, 300)} → `}
                  {escapeLineForWindow(entry.path, 300)}
                </span>
                <Counts file={entry} />
              </button>
            </li>
          ))}
        </ul>
        <div className="diff-pane">{file === undefined ? <div className="diff-empty">{files === null ? 'Loading…' : 'No files.'}</div> : <FileDiff diff={diffs.get(file.index) ?? null} path={file.path} />}</div>
      </div>
      <div className="modal-actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}
