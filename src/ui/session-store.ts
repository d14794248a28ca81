/**
 * The signed-in token of this browser tab, as a tiny external store (read with useSyncExternalStore).
 * It lives in sessionStorage: as long as the tab, never in a cookie, never sent anywhere but the
 * Authorization header of this page's own tRPC calls.
 */

const STORAGE_KEY = 'plant-store.token';

export type Notice = { kind: 'error' | 'info'; text: string };

export type TokenState = {
  token: string | null;
  /** Where the token came from: typed into the sign-in form, or restored from the tab's storage. */
  origin: 'form' | 'storage';
  /** True once `me` accepted the token; a 401 after that means the session ended, not a typo. */
  confirmed: boolean;
  /** What the sign-in form says: why the last session ended, or that the user signed out. */
  notice: Notice | null;
};

function readStorage(): string | null {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

function writeStorage(token: string | null): void {
  try {
    if (token === null) window.sessionStorage.removeItem(STORAGE_KEY);
    else window.sessionStorage.setItem(STORAGE_KEY, token);
  } catch {
    // Storage can be switched off; the page still works for as long as it stays open.
  }
}

let state: TokenState | null = null;
const listeners = new Set<() => void>();

function current(): TokenState {
  if (state === null) {
    const stored = readStorage();
    state = { token: stored, origin: stored ? 'storage' : 'form', confirmed: false, notice: null };
  }
  return state;
}

function set(next: TokenState): void {
  state = next;
  for (const listener of listeners) listener();
}

export const tokenStore = {
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  /** The browser's snapshot. */
  get: current,
  /** The server's snapshot: nothing is known before the browser reads its storage. */
  getServer: (): TokenState | null => null,
  /** The token for the next request's Authorization header. */
  token: (): string | null => (typeof window === 'undefined' ? null : current().token),

  signIn(token: string): void {
    set({ token, origin: 'form', confirmed: false, notice: null });
  },
  /** `me` accepted the token: keep it for the tab's life. */
  confirm(token: string): void {
    const now = current();
    if (now.token !== token || now.confirmed) return;
    writeStorage(token);
    set({ ...now, confirmed: true });
  },
  signOut(notice: Notice | null): void {
    writeStorage(null);
    set({ token: null, origin: 'form', confirmed: false, notice });
  },
  /** Any request was answered 401. */
  refused(): void {
    const now = current();
    if (now.token === null) return;
    tokenStore.signOut({
      kind: 'error',
      text: now.confirmed
        ? 'Your session has ended: the token was revoked or has expired. Sign in again with a valid token.'
        : 'That token was not accepted: it is unknown, revoked or expired.',
    });
  },
};
