'use client';

// First: it configures zod for the page's CSP before any schema is built.
import './zod-browser';

import { KeyRound, LogOut, Sprout, Webhook } from 'lucide-react';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import type { ReactNode } from 'react';

import { ActivityIndicator } from './ActivityIndicator';
import { NoticesProvider } from './notices';
import { SessionProvider, useSession } from './session';
import { SignIn } from './SignIn';
import { UserText } from './UserText';

/**
 * The page's frame on every route: the session and data providers, a top bar with who is signed in, the
 * navigation (a side bar from 900 px, in the top bar below), the view, and a footer at the bottom. Signed
 * out, every route shows the sign-in form instead of its view.
 */
export function AppShell({ children }: { children: ReactNode }) {
  return (
    <SessionProvider>
      <ActivityIndicator />
      <NoticesProvider>
        <Shell>{children}</Shell>
      </NoticesProvider>
    </SessionProvider>
  );
}

const NAV = [
  { href: '/plants', label: 'Plants', icon: Sprout, adminOnly: false },
  { href: '/tokens', label: 'API tokens', icon: KeyRound, adminOnly: true },
  { href: '/webhooks', label: 'Webhooks', icon: Webhook, adminOnly: true },
] as const;

function Logo() {
  return (
    <svg className="brand__mark" viewBox="0 0 32 32" aria-hidden="true">
      <rect width="32" height="32" rx="7" fill="#2f6b4f" />
      <path d="M16 26V14" stroke="#fff" strokeWidth="2.2" strokeLinecap="round" />
      <path d="M16 16c0-5 3-8 8-8 0 5-3 8-8 8z" fill="#cfe6d8" />
      <path d="M16 19c0-4-3-7-8-7 0 4 3 7 8 7z" fill="#fff" />
    </svg>
  );
}

function Shell({ children }: { children: ReactNode }) {
  const session = useSession();
  const pathname = usePathname();
  const { status, user, origin } = session;
  const signedIn = status === 'signedIn' && user !== null;

  const links = NAV.filter((item) => !item.adminOnly || user?.role === 'admin');
  const navLinks = links.map(({ href, label, icon: Icon }) => (
    <Link key={href} href={href} className="navlink" aria-current={pathname === href ? 'page' : undefined}>
      <Icon className="icon" aria-hidden="true" />
      {label}
    </Link>
  ));

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar__inner">
          <Link className="brand" href={signedIn ? '/plants' : '/'}>
            <Logo />
            Plant Store
          </Link>
          {signedIn ? (
            <>
              <nav className="topnav" aria-label="Main">
                {navLinks}
              </nav>
              <div className="who">
                <p className="who__name" data-testid="signed-in-as">
                  <span className="avatar" aria-hidden="true">
                    {[...user.name][0]?.toUpperCase()}
                  </span>
                  <span className="who__user">
                    <span className="sr-only">Signed in as </span>
                    <UserText>{user.name}</UserText>
                  </span>
                  <span className={`badge badge--${user.role}`}>{user.role === 'admin' ? 'Admin' : 'Member'}</span>
                </p>
                <button type="button" className="button button--quiet" onClick={session.signOut}>
                  <LogOut className="icon" aria-hidden="true" />
                  <span className="collapse-label">Sign out</span>
                </button>
              </div>
            </>
          ) : null}
        </div>
      </header>
      <div className={signedIn ? 'layout' : 'layout layout--bare'}>
        {signedIn ? (
          <nav className="sidenav" aria-label="Main">
            <ul>
              {navLinks.map((link) => (
                <li key={link.key}>{link}</li>
              ))}
            </ul>
          </nav>
        ) : null}
        <main id="main" className="main" tabIndex={-1}>
          {status === 'restoring' || (status === 'checking' && origin === 'storage') ? (
            <p className="placeholder" role="status">
              <span className="spinner" aria-hidden="true" /> {status === 'restoring' ? 'Loading…' : 'Checking your session…'}
            </p>
          ) : signedIn ? (
            <div className="view">{children}</div>
          ) : (
            <SignIn />
          )}
        </main>
      </div>
      <footer className="footer">
        <p>Plant Store</p>
        <p>
          {/* Served by the server, not a view of this app: a plain link, loaded in full. */}
          REST API and its documentation: <a href="/api/docs">/api/docs</a>
        </p>
      </footer>
    </div>
  );
}
