'use client';

import { X } from 'lucide-react';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';

/**
 * Notices: what the page says after an action ("Deleted plant “Fern” (id 7). Undo"). They stack at the
 * bottom of the window, over the content (so the table never jumps), are announced (a polite live region;
 * errors as alerts), and leave on their own after a while unless the pointer or the keyboard is on them.
 * Their text is React nodes, never strings glued together: user text inside goes through <UserText> (a
 * <bdi>), so a name with U+202E cannot reverse the sentence around it.
 */
export type NoticeKind = 'success' | 'info' | 'warning' | 'error';
export type NoticeAction = { label: string; run: () => void | Promise<void> };
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
  const dismiss = useCallback((id: number) => setNotices((list) => list.filter((notice) => notice.id !== id)), []);
  const show = useCallback((input: NoticeInput) => {
    const id = nextId++;
    setNotices((list) => [...list.filter((notice) => input.key === undefined || notice.key !== input.key), { ...input, id }].slice(-4));
    return id;
  }, []);
  const api = useMemo(() => ({ show, dismiss }), [show, dismiss]);
  const polite = notices.filter((notice) => notice.kind !== 'error');
  const urgent = notices.filter((notice) => notice.kind === 'error');
  return (
    <NoticesContext.Provider value={api}>
      {children}
      <div className="notices" role="region" aria-label="Notices">
        <div role="status" aria-live="polite" className="notices__list">
          {polite.map((notice) => (
            <NoticeItem key={notice.id} notice={notice} onDismiss={() => dismiss(notice.id)} />
          ))}
        </div>
        <div role="alert" className="notices__list">
          {urgent.map((notice) => (
            <NoticeItem key={notice.id} notice={notice} onDismiss={() => dismiss(notice.id)} />
          ))}
        </div>
      </div>
    </NoticesContext.Provider>
  );
}

function NoticeItem({ notice, onDismiss }: { notice: Notice; onDismiss: () => void }) {
  const [held, setHeld] = useState(false);
  const [busy, setBusy] = useState(false);
  const timeout = notice.timeoutMs ?? (notice.kind === 'error' ? null : NOTICE_TIMEOUT_MS);
  const dismissRef = useRef(onDismiss);
  useEffect(() => {
    dismissRef.current = onDismiss;
  });
  // The time left restarts when the pointer or focus leaves: a notice being read or acted on stays.
  useEffect(() => {
    if (timeout === null || held || busy) return;
    const timer = setTimeout(() => dismissRef.current(), timeout);
    return () => clearTimeout(timer);
  }, [timeout, held, busy]);
  return (
    <div
      className={`toast notice notice--${notice.kind}`}
      data-notice-kind={notice.kind}
      onPointerEnter={() => setHeld(true)}
      onPointerLeave={() => setHeld(false)}
      onFocus={() => setHeld(true)}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setHeld(false);
      }}
    >
      <p className="toast__text">{notice.content}</p>
      {notice.action ? (
        <button
          type="button"
          className="button button--small"
          aria-disabled={busy || undefined}
          onClick={async () => {
            if (busy) return;
            setBusy(true);
            try {
              await notice.action!.run();
            } finally {
              setBusy(false);
              onDismiss();
            }
          }}
        >
          {busy ? <span className="spinner" aria-hidden="true" /> : null}
          {notice.action.label}
        </button>
      ) : null}
      <button type="button" className="button button--small button--quiet icon-button" aria-label="Dismiss" title="Dismiss" onClick={onDismiss}>
        <X className="icon" aria-hidden="true" />
      </button>
    </div>
  );
}
