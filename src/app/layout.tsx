import './globals.css';

import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';

import { AppShell } from '@/ui/AppShell';

export const metadata: Metadata = { title: 'Plant Store', description: 'The plant catalogue and its API tokens' };
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
