import type { Metadata } from 'next';

import { PlantsView } from '@/ui/plants/PlantsView';

export const metadata: Metadata = { title: 'Plants · Plant Store' };

export default function PlantsPage() {
  return <PlantsView />;
}
