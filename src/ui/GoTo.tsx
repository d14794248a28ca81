'use client';

import { useRouter } from 'next/navigation';
import { useEffect } from 'react';

/** Replaces the address with `href` (the export has no server to redirect): Back does not return here. */
export function GoTo({ href }: { href: string }) {
  const router = useRouter();
  useEffect(() => {
    router.replace(href);
  }, [router, href]);
  return (
    <p className="placeholder" role="status">
      <span className="spinner" aria-hidden="true" /> Loading…
    </p>
  );
}
