'use client';

import { type ReactNode, useId, useLayoutEffect, useRef } from 'react';

type ModalProps = {
  title: ReactNode;
  children: ReactNode;
  /** Called when the dialog closes without its own action (Cancel, Escape). */
  onCancel: () => void;
  /** The element to focus first; the first button otherwise. */
  initialFocus?: React.RefObject<HTMLElement | null>;
  describedBy?: boolean;
  className?: string;
};

/**
 * A modal on the native <dialog>: the browser puts it in the top layer, makes the page behind it inert,
 * keeps focus inside and closes it on Escape, and hands focus back to what opened it. No library: the
 * platform's element does all a headless dialog library would, with no inline styles (the CSP has none).
 * Render it only while it is open.
 */
export function Modal({ title, children, onCancel, initialFocus, describedBy = true, className }: ModalProps) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const bodyId = useId();
  const closingByAction = useRef(false);

  // A layout effect: its cleanup runs while the dialog is still in the document, so closing it there still
  // hands focus back to the element that opened it.
  useLayoutEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (!dialog.open) dialog.showModal();
    (initialFocus?.current ?? dialog.querySelector<HTMLElement>('[data-autofocus], button'))?.focus();
    return () => {
      closingByAction.current = true;
      if (dialog.open) dialog.close();
    };
    // Opened once per mount.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  return (
    <dialog
      ref={dialogRef}
      className={['dialog', className ?? ''].filter(Boolean).join(' ')}
      aria-labelledby={titleId}
      aria-describedby={describedBy ? bodyId : undefined}
      onClose={() => {
        if (!closingByAction.current) onCancel();
      }}
    >
      <div className="dialog__inner">
        <h2 id={titleId} className="dialog__title">
          {title}
        </h2>
        <div id={bodyId} className="dialog__body">
          {children}
        </div>
      </div>
    </dialog>
  );
}

type ConfirmDialogProps = {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
};

/** Asks before something that cannot be undone. Focus starts on Cancel, the safe choice. */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onCancel }: ConfirmDialogProps) {
  const cancelRef = useRef<HTMLButtonElement>(null);
  const confirmed = useRef(false);
  return (
    <Modal
      title={title}
      onCancel={() => {
        if (!confirmed.current) onCancel();
      }}
      initialFocus={cancelRef}
    >
      {children}
      <div className="dialog__actions">
        <button type="button" className="button" ref={cancelRef} onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className="button button--danger"
          onClick={(event) => {
            if (confirmed.current) return;
            confirmed.current = true;
            // Closed first: the browser hands focus back to what opened the dialog, and onConfirm may then
            // move it on (the page behind a modal dialog is inert, so nothing there could take it before).
            event.currentTarget.closest('dialog')?.close();
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
