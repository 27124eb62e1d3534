/** The fixed navigation rail: one button per page, the Chats button with how many approvals wait. */
import { PAGES, type Page } from '../pages.js';

export function Rail({ page: current, approvals, onPage }: { readonly page: Page; readonly approvals: number; readonly onPage: (page: Page) => void }) {
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
    </nav>
  );
}
