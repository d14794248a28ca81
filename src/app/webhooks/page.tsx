import type { Metadata } from 'next';

import { WebhooksView } from '@/ui/webhooks/WebhooksView';

export const metadata: Metadata = { title: 'Webhooks · Plant Store' };

export default function WebhooksPage() {
  return <WebhooksView />;
}
