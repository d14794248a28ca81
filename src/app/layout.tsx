import './globals.css';

import type { Metadata, Viewport } from 'next';
import { headers } from 'next/headers';
import type { ReactNode } from 'react';

export const metadata: Metadata = { title: 'Plant Store admin', description: 'Manage the plant catalogue and its API tokens' };
export const viewport: Viewport = { width: 'device-width', initialScale: 1, themeColor: '#2f6b4f' };

export default async function RootLayout({ children }: { children: ReactNode }) {
  // src/proxy.ts gives every page request its own CSP nonce. Reading the request headers here makes every
  // page render per request, so Next.js can put that nonce on its scripts (it reads it from the request's
  // Content-Security-Policy header); a page prerendered at build time would carry no nonce and not run.
  const nonce = (await headers()).get('x-nonce');
  if (!nonce && process.env.NODE_ENV === 'production') {
    console.warn(JSON.stringify({ level: 'warn', msg: 'a page was rendered without a CSP nonce; is src/proxy.ts running?' }));
  }
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
