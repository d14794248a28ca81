import { AdminApp } from '@/ui/AdminApp';

export default function HomePage() {
  return (
    <>
      <AdminApp />
      <noscript>
        <p className="noscript">This admin page needs JavaScript. The REST API works without it: see /api/docs.</p>
      </noscript>
    </>
  );
}
