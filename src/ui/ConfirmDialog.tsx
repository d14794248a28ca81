'use client';

import { type ReactNode, useId, useLayoutEffect, useRef } from 'react';

type ConfirmDialogProps = {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
};

/**
 * A modal confirmation on the native <dialog>: the browser traps focus inside it, Escape cancels, and
 * the page behind it is inert. Render it only while it is open. Focus starts on Cancel, the safe choice,
 * and returns to the button that opened it.
 */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onCancel }: ConfirmDialogProps) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const confirmedRef = useRef(false);
  const titleId = useId();
  const bodyId = useId();

  // A layout effect: its cleanup runs while the dialog is still in the document, so closing it there
  // still hands focus back to the button that opened it.
  useLayoutEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (!dialog.open) dialog.showModal();
    cancelRef.current?.focus();
    return () => {
      if (dialog.open) dialog.close();
    };
  }, []);

  function close() {
    if (dialogRef.current?.open) dialogRef.current.close();
  }

  return (
    <dialog
      ref={dialogRef}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      // Cancel or Escape: the dialog closes (the browser restores focus), and the parent forgets it.
      onClose={() => {
        if (!confirmedRef.current) onCancel();
      }}
    >
      <h2 id={titleId} className="dialog__title">
        {title}
      </h2>
      <div id={bodyId} className="dialog__body">
        {children}
      </div>
      <div className="dialog__actions">
        <button
          type="button"
          className="button button--danger"
          onClick={() => {
            // Closed first, so focus is back on the button that opened it; onConfirm may then move it on.
            confirmedRef.current = true;
            close();
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
        <button
          type="button"
          className="button"
          ref={cancelRef}
          onClick={close}
        >
          Cancel
        </button>
      </div>
    </dialog>
  );
}
