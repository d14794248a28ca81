// The stylesheets, one concern each, in cascade order (tokens first); the build serves them as files,
// which the pages' CSP allows (`style-src 'self'`: no inline style anywhere).
import './styles/tokens.css';
import './styles/base.css';
import './styles/shell.css';
import './styles/buttons.css';
import './styles/forms.css';
import './styles/badges.css';
import './styles/notices.css';
import './styles/toolbar.css';
import './styles/table.css';
import './styles/dialogs.css';
import './styles/import.css';
import './styles/details.css';
import './styles/activity.css';
import './styles/signin.css';
import './styles/tokens-view.css';
import './styles/webhooks.css';

import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';

import { AppShell } from '@/ui/AppShell';

// public/ holds the files served at fixed addresses: the web manifest linked here, favicon.ico (what browsers ask
// for on their own) and robots.txt. The icon the pages link is icon.svg beside this file (Next.js adds the link).
export const metadata: Metadata = { title: 'Plant Store', description: 'The plant catalogue and its API tokens', manifest: '/manifest.webmanifest' };
export const viewport: Viewport = {
  width: 'device-width',
  initialScale: 1,
  colorScheme: 'light dark',
  themeColor: [
    { media: '(prefers-color-scheme: light)', color: '#ffffff' },
    { media: '(prefers-color-scheme: dark)', color: '#171d1a' },
  ],
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <AppShell>{children}</AppShell>
        <noscript>
          <p className="noscript">This page needs JavaScript. The REST API works without it: see /api/docs.</p>
        </noscript>
      </body>
    </html>
  );
}
