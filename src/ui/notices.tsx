'use client';

import { X } from 'lucide-react';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';

/**
 * Notices: what the page says after an action ("Deleted plant “Fern” (id 7). Undo"). They stack at the
 * bottom of the window, over the content (so the table never jumps), are announced (a polite live region;
 * errors as alerts), and leave on their own after a while, but never while the pointer or the keyboard is on
 * them. An Undo is in reach at once wherever the cursor is: Ctrl+Z (⌘Z) runs the newest notice's Undo.
 * Their text is React nodes, never strings glued together: user text inside goes through <UserText> (a
 * <bdi>), so a name with U+202E cannot reverse the sentence around it.
 */
export type NoticeKind = 'success' | 'info' | 'warning' | 'error';
/** `shortcut: 'undo'`: Ctrl+Z (⌘Z) anywhere on the page runs it, while the notice shows, outside text fields and dialogs. */
export type NoticeAction = { label: string; run: () => void | Promise<void>; shortcut?: 'undo' };
export type NoticeInput = {
  kind: NoticeKind;
  content: ReactNode;
  /** A button in the notice, such as Undo; offered for as long as the notice shows. */
  action?: NoticeAction;
  /** Milliseconds on screen; errors stay until dismissed unless given one. */
  timeoutMs?: number;
  /** A notice with the same key replaces the one before it (a progress line). */
  key?: string;
};
type Notice = NoticeInput & { id: number };

export const NOTICE_TIMEOUT_MS = 8_000;

type NoticesApi = { show: (notice: NoticeInput) => number; dismiss: (id: number) => void };
const NoticesContext = createContext<NoticesApi | null>(null);

export function useNotices(): NoticesApi {
  const api = useContext(NoticesContext);
  if (!api) throw new Error('useNotices needs a <NoticesProvider> above it');
  return api;
}

let nextId = 1;

export function NoticesProvider({ children }: { children: ReactNode }) {
  const [notices, setNotices] = useState<Notice[]>([]);
  const [running, setRunning] = useState<ReadonlySet<number>>(new Set());
  const dismiss = useCallback((id: number) => setNotices((list) => list.filter((notice) => notice.id !== id)), []);
  const show = useCallback((input: NoticeInput) => {
    const id = nextId++;
    setNotices((list) => [...list.filter((notice) => input.key === undefined || notice.key !== input.key), { ...input, id }].slice(-4));
    return id;
  }, []);
  const api = useMemo(() => ({ show, dismiss }), [show, dismiss]);

  /** A notice's action, once (a click and the shortcut together run it once): busy while it runs, then the notice goes. */
  const runningIds = useRef(new Set<number>());
  const runAction = useCallback(
    async (notice: Notice) => {
      if (!notice.action || runningIds.current.has(notice.id)) return;
      runningIds.current.add(notice.id);
      setRunning(new Set(runningIds.current));
      try {
        await notice.action.run();
      } finally {
        runningIds.current.delete(notice.id);
        setRunning(new Set(runningIds.current));
        dismiss(notice.id);
      }
    },
    [dismiss],
  );

  // Ctrl+Z (⌘Z on a Mac) runs the newest Undo on screen: outside a text field (where it undoes typing) and a dialog.
  const undoable = [...notices].reverse().find((notice) => notice.action?.shortcut === 'undo');
  useEffect(() => {
    if (!undoable) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key.toLowerCase() !== 'z' || !(event.ctrlKey || event.metaKey) || event.shiftKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable]:not([contenteditable="false"])') || document.querySelector('dialog[open]')) return;
      event.preventDefault();
      void runAction(undoable);
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [undoable, runAction]);

  const polite = notices.filter((notice) => notice.kind !== 'error');
  const urgent = notices.filter((notice) => notice.kind === 'error');
  const item = (notice: Notice) => (
    <NoticeItem key={notice.id} notice={notice} busy={running.has(notice.id)} onAction={() => void runAction(notice)} onDismiss={() => dismiss(notice.id)} />
  );
  return (
    <NoticesContext.Provider value={api}>
      {children}
      <div className="notices" role="region" aria-label="Notices">
        <div role="status" aria-live="polite" className="notices__list">
          {polite.map(item)}
        </div>
        <div role="alert" className="notices__list">
          {urgent.map(item)}
        </div>
      </div>
    </NoticesContext.Provider>
  );
}

const APPLE = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

function NoticeItem({ notice, busy, onAction, onDismiss }: { notice: Notice; busy: boolean; onAction: () => void; onDismiss: () => void }) {
  // Held by the pointer and by the keyboard separately: the pointer leaving a notice the keyboard is in keeps it.
  const [hovered, setHovered] = useState(false);
  const [focused, setFocused] = useState(false);
  const timeout = notice.timeoutMs ?? (notice.kind === 'error' ? null : NOTICE_TIMEOUT_MS);
  const dismissRef = useRef(onDismiss);
  useEffect(() => {
    dismissRef.current = onDismiss;
  });
  // The time left restarts when the pointer and focus have left: a notice being read or acted on stays.
  useEffect(() => {
    if (timeout === null || hovered || focused || busy) return;
    const timer = setTimeout(() => dismissRef.current(), timeout);
    return () => clearTimeout(timer);
  }, [timeout, hovered, focused, busy]);
  const shortcut = notice.action?.shortcut === 'undo' ? (APPLE ? '⌘Z' : 'Ctrl+Z') : null;
  return (
    <div
      className={`toast notice notice--${notice.kind}`}
      data-notice-kind={notice.kind}
      onPointerEnter={() => setHovered(true)}
      onPointerLeave={() => setHovered(false)}
      onFocus={() => setFocused(true)}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setFocused(false);
      }}
    >
      <p className="toast__text">{notice.content}</p>
      {notice.action ? (
        <button
          type="button"
          className="button button--small"
          aria-disabled={busy || undefined}
          aria-keyshortcuts={shortcut ? 'Control+Z Meta+Z' : undefined}
          onClick={() => {
            if (!busy) onAction();
          }}
        >
          {busy ? <span className="spinner" aria-hidden="true" /> : null}
          {notice.action.label}
          {shortcut ? (
            <kbd className="shortcut" aria-hidden="true">
              {shortcut}
            </kbd>
          ) : null}
        </button>
      ) : null}
      <button type="button" className="button button--small button--quiet icon-button" aria-label="Dismiss" title="Dismiss" onClick={onDismiss}>
        <X className="icon" aria-hidden="true" />
      </button>
    </div>
  );
}
