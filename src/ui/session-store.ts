/**
 * The signed-in token of this browser tab, as a tiny external store (read with useSyncExternalStore).
 * It lives in sessionStorage: as long as the tab, never in a cookie, never sent anywhere but the
 * Authorization header of this page's own calls. A new tab of the same browser (a middle-clicked link, a
 * typed address) starts with an empty sessionStorage, so it asks the tabs already open on a
 * BroadcastChannel (same origin, same browser profile only), and one that is signed in hands its token
 * over; with no tab open it shows the sign-in form. Signing out signs out every tab. Why not localStorage:
 * see docs/admin-page.md, "Sessions".
 */

const STORAGE_KEY = 'plant-store.token';
const CHANNEL_NAME = 'plant-store.session';
/** How long a new tab waits for an open tab to answer before it shows the sign-in form. */
export const HANDOFF_WAIT_MS = 300;

type Message = { type: 'ask' } | { type: 'token'; token: string } | { type: 'signed-out' };

export type Notice = { kind: 'error' | 'info'; text: string };

export type TokenState = {
  token: string | null;
  /** Where the token came from: typed into the sign-in form, or restored from the tab's storage. */
  origin: 'form' | 'storage';
  /** True once `me` accepted the token; a 401 after that means the session ended, not a typo. */
  confirmed: boolean;
  /** What the sign-in form says: why the last session ended, or that the user signed out. */
  notice: Notice | null;
  /** A new tab waiting for an open tab to hand its token over. */
  awaiting?: boolean;
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
let channel: BroadcastChannel | null = null;

function post(message: Message): void {
  try {
    channel?.postMessage(message);
  } catch {
    // A closed channel: this tab is going away.
  }
}

function onMessage(message: Message): void {
  const now = state;
  if (!now) return;
  if (message.type === 'ask' && now.confirmed && now.token) post({ type: 'token', token: now.token });
  if (message.type === 'token' && now.awaiting && now.token === null) set({ token: message.token, origin: 'storage', confirmed: false, notice: null });
  if (message.type === 'signed-out' && now.token !== null) {
    writeStorage(null);
    set({ token: null, origin: 'form', confirmed: false, notice: { kind: 'info', text: 'You signed out in another tab.' } });
  }
}

function current(): TokenState {
  if (state === null) {
    const stored = readStorage();
    state = { token: stored, origin: stored ? 'storage' : 'form', confirmed: false, notice: null };
    if (typeof BroadcastChannel !== 'undefined') {
      channel = new BroadcastChannel(CHANNEL_NAME);
      channel.onmessage = (event: MessageEvent<Message>) => onMessage(event.data);
      if (stored === null) {
        state = { ...state, awaiting: true };
        post({ type: 'ask' });
        setTimeout(() => {
          if (state?.awaiting) set({ ...state, awaiting: false });
        }, HANDOFF_WAIT_MS);
      }
    }
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
  signOut(notice: Notice | null, options: { everywhere?: boolean } = {}): void {
    writeStorage(null);
    set({ token: null, origin: 'form', confirmed: false, notice });
    if (options.everywhere) post({ type: 'signed-out' });
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
