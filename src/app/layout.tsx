import './globals.css';

import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';

export const metadata: Metadata = { title: 'Plant Store admin', description: 'Manage the plant catalogue and its API tokens' };
export const viewport: Viewport = { width: 'device-width', initialScale: 1, themeColor: '#2f6b4f' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
