'use client';

// First: it configures zod for the page's CSP before any schema is built.
import './zod-browser';

import { useEffect } from 'react';

import { ActivityIndicator } from './ActivityIndicator';
import { PlantsSection } from './PlantsSection';
import { SessionProvider, useSession } from './session';
import { SignIn } from './SignIn';
import { TokensSection } from './TokensSection';

/** The whole admin page: one client tree under the session and the tRPC/React Query providers. */
export function AdminApp() {
  return (
    <SessionProvider>
      <ActivityIndicator />
      <Shell />
    </SessionProvider>
  );
}

function Shell() {
  const session = useSession();
  const { status, user, origin } = session;

  // Once signed in, the cursor starts at the page's content rather than on a form that is gone.
  const signedIn = status === 'signedIn';
  useEffect(() => {
    if (signedIn && origin === 'form') document.getElementById('plants-title')?.focus();
  }, [signedIn, origin]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar__inner">
          <p className="brand">
            <span className="brand__mark" aria-hidden="true">
              ❦
            </span>{' '}
            Plant Store <span className="brand__sub">admin</span>
          </p>
          {signedIn && user ? (
            <div className="who">
              <p className="who__name" data-testid="signed-in-as">
                Signed in as <strong>{user.name}</strong> <span className={`badge badge--${user.role}`}>{user.role}</span>
              </p>
              <button type="button" className="button button--quiet" onClick={session.signOut}>
                Sign out
              </button>
            </div>
          ) : null}
        </div>
      </header>
      <main id="main" className="main" tabIndex={-1}>
        <h1 className="sr-only">Plant Store admin</h1>
        {status === 'restoring' || (status === 'checking' && origin === 'storage') ? (
          <p className="placeholder" role="status">
            <span className="spinner" aria-hidden="true" /> {status === 'restoring' ? 'Loading…' : 'Checking your session…'}
          </p>
        ) : signedIn && user ? (
          <>
            <PlantsSection canSeeAll={user.role === 'admin'} />
            {user.role === 'admin' ? <TokensSection /> : null}
          </>
        ) : (
          <SignIn />
        )}
      </main>
      <footer className="footer">
        <p>
          The REST API and its documentation:{' '}
          {/* Served by the server (Swagger UI), not a page of this app: a plain link, loaded in full. */}
          <a href="/api/docs">/api/docs</a>
        </p>
      </footer>
    </>
  );
}
