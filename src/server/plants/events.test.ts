import { afterEach, describe, expect, it } from 'vitest';

import { signIn } from '@test-support/actors';

import { onPlantsCommitted, type PlantsCommit } from './events';

/**
 * Every commit of plants is heard through the one seam, single rows as well as bulk ones: the live feed's
 * reader looks at once on each (live/feed.ts), the webhook sender on those that wrote outbox events.
 */
let stop: (() => void) | undefined;
afterEach(() => stop?.());

function hear(): PlantsCommit[] {
  const heard: PlantsCommit[] = [];
  stop = onPlantsCommitted((commit) => heard.push(commit));
  return heard;
}

describe('plants committed', () => {
  it('is heard for a single create, rename, re-tag and delete, with whether the outbox got events', async () => {
    const { caller } = await signIn('events-owner');
    const heard = hear();
    await caller.plants.create({ id: 8_001n, name: 'Fern' });
    expect(heard).toEqual([{ outboxEvents: true }]);
    await caller.plants.update({ id: 8_001n, name: 'Fern 2' });
    await caller.plants.update({ id: 8_001n, tag: 'shade' });
    expect(heard.slice(1)).toEqual([{ outboxEvents: false }, { outboxEvents: false }]);
    await caller.plants.delete({ id: 8_001n });
    expect(heard.slice(3)).toEqual([{ outboxEvents: true }]);
  });

  it('is heard for bulk changes and restores, and not for a change that changed nothing', async () => {
    const { caller } = await signIn('events-bulk');
    await caller.plants.create({ id: 8_101n, name: 'Palm' });
    const heard = hear();
    await caller.plants.retagMany({ selection: { kind: 'ids', ids: [8_101n] }, tag: 'tall' });
    await caller.plants.deleteMany({ selection: { kind: 'ids', ids: [8_101n] }, keepForUndo: true });
    await caller.plants.restore({ ids: [8_101n] });
    expect(heard).toEqual([{ outboxEvents: false }, { outboxEvents: true }, { outboxEvents: true }]);
    await caller.plants.retagMany({ selection: { kind: 'ids', ids: [8_199n] }, tag: 'none' });
    await caller.plants.delete({ id: 8_199n }).catch(() => undefined);
    expect(heard).toHaveLength(3);
  });
});
