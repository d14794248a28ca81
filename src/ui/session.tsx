'use client';

import { useQueryClient } from '@tanstack/react-query';
import { getQueryKey } from '@trpc/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useSyncExternalStore } from 'react';

import { type RouterOutputs, trpc, TRPCReactProvider } from '@/ui/trpc';
import { httpStatusOf } from '@/ui/query-client';

import { problemOf } from './problems';
import { type Notice, tokenStore } from './session-store';

export type User = RouterOutputs['me'];
export type { Notice };

export type Session = {
  /**
   * restoring: the server's render and hydration, before the tab's storage is read.
   * checking: a token is being checked with `me`. signedIn: `user` is known.
   */
  status: 'restoring' | 'signedOut' | 'checking' | 'signedIn';
  /** Where the token being checked came from: the sign-in form or the tab's storage. */
  origin: 'form' | 'storage';
  user: User | null;
  notice: Notice | null;
  signIn: (token: string) => void;
  signOut: () => void;
};

const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession needs a <SessionProvider> above it');
  return session;
}

const signOut = () => tokenStore.signOut({ kind: 'info', text: 'You have signed out.' }, { everywhere: true });

export function SessionProvider({ children }: { children: ReactNode }) {
  return (
    <TRPCReactProvider getToken={tokenStore.token} onUnauthorized={tokenStore.refused} onTokenChange={tokenStore.subscribe}>
      <SessionState>{children}</SessionState>
    </TRPCReactProvider>
  );
}

/** Inside the tRPC provider: checks the token with `me`. */
function SessionState({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const stored = useSyncExternalStore(tokenStore.subscribe, tokenStore.get, tokenStore.getServer);
  // Every attempt asks `me` afresh, also with the token of an attempt that could not reach the server.
  const signIn = useCallback(
    (candidate: string) => {
      queryClient.removeQueries({ queryKey: getQueryKey(trpc.me) });
      tokenStore.signIn(candidate);
    },
    [queryClient],
  );
  const token = stored?.token ?? null;
  const me = trpc.me.useQuery(undefined, { enabled: token !== null });
  const user = token !== null ? (me.data ?? null) : null;

  useEffect(() => {
    if (token !== null && user) tokenStore.confirm(token);
  }, [token, user]);

  // A 401 ends the session through the query cache. Anything else (no network, a server fault) keeps the
  // token, and the form says what happened; signing in again retries.
  const unreachable = token !== null && !user && me.isError && httpStatusOf(me.error) !== 401;

  const value = useMemo<Session>(() => {
    if (stored === null || stored.awaiting) return { status: 'restoring', origin: 'storage', user: null, notice: null, signIn, signOut };
    const notice: Notice | null = unreachable
      ? { kind: 'error', text: `The token could not be checked: ${problemOf(me.error).message}.` }
      : stored.notice;
    const status: Session['status'] = token === null || unreachable ? 'signedOut' : user ? 'signedIn' : 'checking';
    return { status, origin: stored.origin, user, notice, signIn, signOut };
  }, [stored, token, user, unreachable, me.error, signIn]);

  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
