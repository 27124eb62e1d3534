/** The fixed navigation rail: one button per page, the Chats button with how many approvals wait. */
import { PanelLeft } from 'lucide-react';
import { PAGES, type Page } from '../pages.js';

/** `sessions`: the sessions pane's toggle, shown (by the style sheet) only where the window is too narrow to keep the pane open. */
export function Rail({ page: current, approvals, onPage, sessions }: { readonly page: Page; readonly approvals: number; readonly onPage: (page: Page) => void; readonly sessions?: { readonly open: boolean; readonly onToggle: () => void } }) {
  return (
    <nav className="rail" aria-label="Ward">
      <div className="rail-mark" aria-hidden>
        W
      </div>
      <ul>
        {PAGES.map((page) => (
          <li key={page.id}>
            <button type="button" className="rail-button" aria-current={current === page.id ? 'page' : undefined} onClick={() => onPage(page.id)} title={page.label}>
              <page.icon size={20} aria-hidden />
              <span>{page.label}</span>
              {page.id === 'chats' && approvals > 0 && (
                <span className="badge" aria-label={`${approvals} ${approvals === 1 ? 'approval' : 'approvals'} waiting`}>
                  {approvals}
                </span>
              )}
            </button>
          </li>
        ))}
      </ul>
      {sessions !== undefined && (
        <button type="button" className="rail-button sessions-toggle" aria-expanded={sessions.open} aria-controls="sessions-pane" onClick={sessions.onToggle} title="Sessions">
          <PanelLeft size={20} aria-hidden />
          <span>Sessions</span>
        </button>
      )}
    </nav>
  );
}
