import type { Metadata } from 'next';

import { TokensView } from '@/ui/tokens/TokensView';

export const metadata: Metadata = { title: 'API tokens · Plant Store' };

export default function TokensPage() {
  return <TokensView />;
}
