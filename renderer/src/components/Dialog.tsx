/**
 * Modal dialogs on the platform's own <dialog> (showModal): the rest of the window is inert,
 * focus moves into the dialog and comes back when it closes, Escape cancels. Named and
 * described for assistive technology. No library here would do more under the renderer's CSP:
 * the ones tried insert <style> elements, which the CSP refuses.
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';

export interface ModalProps {
  readonly open: boolean;
  readonly title: string;
  readonly description?: ReactNode;
  readonly role?: 'dialog' | 'alertdialog';
  readonly className?: string;
  readonly onClose: () => void;
  readonly children?: ReactNode;
}

export function Modal({ open, title, description, role = 'dialog', className, onClose, children }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      dialog.showModal();
      // showModal focuses the first focusable element; the dialog names the one it means.
      dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      role={role}
      className={`modal ${className ?? ''}`}
      aria-labelledby={titleId}
      aria-describedby={description === undefined ? undefined : descriptionId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id={titleId} className="modal-title">
            {title}
          </h2>
          {description !== undefined && (
            <div id={descriptionId} className="modal-description">
              {description}
            </div>
          )}
          {children}
        </>
      )}
    </dialog>
  );
}

export interface ConfirmProps {
  readonly open: boolean;
  readonly title: string;
  readonly description: ReactNode;
  readonly confirmLabel: string;
  readonly onConfirm: () => void;
  readonly onCancel: () => void;
}

/** Asks before something that cannot be undone; Cancel has the focus, so Enter never destroys. */
export function ConfirmDialog({ open, title, description, confirmLabel, onConfirm, onCancel }: ConfirmProps) {
  return (
    <Modal open={open} title={title} description={description} role="alertdialog" onClose={onCancel}>
      <div className="modal-actions">
        <button type="button" onClick={onCancel} data-autofocus>
          Cancel
        </button>
        <button type="button" className="danger solid" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
