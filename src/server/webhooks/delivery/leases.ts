import 'server-only';

import { db } from '@/server/db/client';

/**
 * An endpoint's lease (leaseOwner, leaseUntilMs): the one instance that sends to it now. Taken with a
 * conditional UPDATE that one instance wins on either engine, renewed while sending, given back when done
 * (free at once, or only after a wait when the worker failed on it).
 */

/**
 * Free from its time on: a lease given back (or backed off) until T is free at T. The release and the next
 * look often fall in one millisecond, and a strict `<` left the endpoint to the next poll (5 s) with an
 * event waiting.
 */
export const leaseFree = (now: number) => ({ OR: [{ leaseUntilMs: null }, { leaseUntilMs: { lte: BigInt(now) } }] });

/** Takes a free lease of an enabled endpoint; true when this instance won it. */
export async function takeLease(endpointId: number, owner: string, now: number, leaseMs: number): Promise<boolean> {
  const { count } = await db.webhookEndpoint.updateMany({
    where: { id: endpointId, enabled: true, ...leaseFree(now) },
    data: { leaseOwner: owner, leaseUntilMs: BigInt(now + leaseMs) },
  });
  return count === 1;
}

/** Extends the lease this owner holds; false when it holds it no more. */
export async function renewLease(endpointId: number, owner: string, leaseMs: number): Promise<boolean> {
  const { count } = await db.webhookEndpoint.updateMany({
    where: { id: endpointId, leaseOwner: owner },
    data: { leaseUntilMs: BigInt(Date.now() + leaseMs) },
  });
  return count === 1;
}

/** Gives the lease back, free from `freeAtMs` on for every instance. */
export async function releaseLease(endpointId: number, owner: string, freeAtMs: number): Promise<void> {
  await db.webhookEndpoint.updateMany({ where: { id: endpointId, leaseOwner: owner }, data: { leaseOwner: null, leaseUntilMs: BigInt(freeAtMs) } });
}
