import { describe, expect, it } from 'vitest';

import type { PlantPage } from '@/shared/plant-table';

import { AUTO_CONTINUATIONS, chainFor, continuationOf, fullAt, joinWalked, reachedText } from './walked-page';

const row = (id: number) => ({ id: BigInt(id), name: `p${id}` });
const answer = (fields: Partial<PlantPage>): PlantPage => ({
  rows: [],
  total: 1_000,
  totalExact: false,
  offset: 0,
  offsetExact: true,
  hasNext: true,
  cursor: undefined,
  asOf: new Date(0),
  walkStopped: null,
  ...fields,
});

describe('a page joined from walks that stopped', () => {
  it('forwards: rows in order up to the size, still stopped only while not full, placed by the first answer', () => {
    const first = answer({ walkStopped: { direction: 'forwards', id: 50_000n, key: 'aloe m', reached: 'aloe m' } });
    const second = answer({ rows: [row(1), row(2)], offset: 0, offsetExact: false, walkStopped: { direction: 'forwards', id: 100_000n, key: 'begonia', reached: 'begonia' } });
    expect(joinWalked(first, [second], 3)).toMatchObject({ rows: [row(1), row(2)], offset: 0, offsetExact: true, hasNext: true, walkStopped: { id: 100_000n } });
    const third = answer({ rows: [row(3), row(4)], hasNext: false });
    // Full: the row past the page is on the next one, which follows.
    expect(joinWalked(first, [second, third], 3)).toMatchObject({ rows: [row(1), row(2), row(3)], hasNext: true, walkStopped: null });
    // The order ended exactly at the page's end.
    expect(joinWalked(first, [second, third], 4)).toMatchObject({ rows: [row(1), row(2), row(3), row(4)], hasNext: false, walkStopped: null });
  });

  it('backwards: the latest rows first, the size nearest the page turned from, placed by its first row', () => {
    const first = answer({ rows: [row(9)], offset: 400, offsetExact: true, walkStopped: { direction: 'backwards', id: 8n, key: 'f', reached: 'f' } });
    const second = answer({ rows: [row(5), row(6), row(7)], offset: 396, offsetExact: true, walkStopped: null });
    expect(joinWalked(first, [second], 3)).toMatchObject({ rows: [row(6), row(7), row(9)], offset: 397, offsetExact: true, walkStopped: null });
    expect(joinWalked(first, [second], 5)).toMatchObject({ rows: [row(5), row(6), row(7), row(9)], offset: 396, walkStopped: null });
  });

  it('shows a row once, though a row renamed between two requests comes again', () => {
    const first = answer({ rows: [row(1)], walkStopped: { direction: 'forwards', id: 50_000n, key: 'aloe m', reached: 'aloe m' } });
    const second = answer({ rows: [row(1), row(2)], walkStopped: null });
    expect(joinWalked(first, [second], 3).rows).toEqual([row(1), row(2)]);
    const back = answer({ rows: [row(9)], offset: 400, walkStopped: { direction: 'backwards', id: 8n, key: 'f', reached: 'f' } });
    expect(joinWalked(back, [answer({ rows: [row(7), row(9)], offset: 398, walkStopped: null })], 3).rows).toEqual([row(7), row(9)]);
  });

  it('goes on from the place the server held, not only the row', () => {
    const at = new Date(5);
    expect(continuationOf({ direction: 'forwards', id: 4n, key: 'aloe', reached: 'aloe' }, 'name')).toEqual({ kind: 'after', id: 4n, key: 'aloe' });
    expect(continuationOf({ direction: 'backwards', id: 4n, key: at, reached: at.toISOString() }, 'created')).toEqual({ kind: 'before', id: 4n, key: at });
    // The tag order's untagged plants keep their null key; id order sends none (its id is its place).
    expect(continuationOf({ direction: 'forwards', id: 4n, key: null, reached: null }, 'tag')).toEqual({ kind: 'after', id: 4n, key: null });
    expect(continuationOf({ direction: 'forwards', id: 4n, key: null, reached: '4' }, 'id')).toEqual({ kind: 'after', id: 4n });
  });

  it('keeps what it joined and a Stop when the same address is answered again with the same stop', () => {
    const stopped = { direction: 'forwards', id: 50_000n, key: 'aloe m', reached: 'aloe m' } as const;
    const chain = { of: '/plants?q=a&sort=name', basis: 'forwards 50000 aloe m', more: [answer({ rows: [row(1)] })], allowed: AUTO_CONTINUATIONS, halted: true };
    // A refetch: a new answer object, the same place.
    expect(chainFor(chain, chain.of, answer({ asOf: new Date(9), walkStopped: stopped }))).toBe(chain);
    // Stopped elsewhere now: the joined answers no longer follow it; the Stop holds.
    expect(chainFor(chain, chain.of, answer({ walkStopped: { ...stopped, id: 49_999n } }))).toMatchObject({ more: [], halted: true });
    // Another address starts afresh.
    expect(chainFor(chain, '/plants?q=b&sort=name', answer({ walkStopped: stopped }))).toMatchObject({ more: [], halted: false });
  });

  it('an exact last page is full at what is left over after whole pages, as the server reads it', () => {
    const last = answer({ cursor: { kind: 'last' }, total: 30, totalExact: true, walkStopped: { direction: 'backwards', id: 8n, key: 'f', reached: 'f' } });
    expect(fullAt(last, 25)).toBe(5);
    expect(fullAt({ ...last, total: 50 }, 25)).toBe(25);
    expect(fullAt({ ...last, totalExact: false }, 25)).toBe(25);
    expect(fullAt({ ...last, cursor: undefined }, 25)).toBe(25);
    // Joined to that size: the 5 nearest the end, and no longer stopped.
    const more = answer({ rows: [row(1), row(2), row(3), row(4), row(5), row(6)], walkStopped: null });
    expect(joinWalked(last, [more], fullAt(last, 25))).toMatchObject({ rows: [row(2), row(3), row(4), row(5), row(6)], walkStopped: null });
  });

  it('never says fewer plants than it shows, when the total is not exact', () => {
    const first = answer({ total: 1, rows: [row(1)], walkStopped: { direction: 'forwards', id: 2n, key: 'b', reached: 'b' } });
    expect(joinWalked(first, [answer({ total: 1, rows: [row(3), row(4)] })], 25).total).toBe(4);
  });

  it('says how far the walk got in the words of the order', () => {
    expect(reachedText('name', { direction: 'forwards', id: 1n, key: 'aloe m', reached: 'aloe m' })).toBe('names up to “aloe m”');
    expect(reachedText('tag', { direction: 'backwards', id: 7n, key: null, reached: null })).toBe('untagged plants back to id 7');
    expect(reachedText('id', { direction: 'forwards', id: 50_000n, key: null, reached: '50000' })).toBe('ids up to 50000');
  });
});
