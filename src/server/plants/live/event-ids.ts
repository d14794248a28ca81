import 'server-only';

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

import { db } from '@/server/db/client';

/**
 * The live feed's event ids, as its clients see them: opaque, so that they tell nothing about what others did.
 *
 * The feed's position is the change log's `seq`, one count for every user's changes; sent as it is, a member
 * who saw 1, 3, 5, 7 learnt that someone else wrote in between, and how much. Each id is instead the position
 * and the user it was sent to, encrypted as one AES block with a key every instance shares (made once, by the
 * first process that needs it, in SharedKey), so any instance can resume from it and nobody can read it: two ids
 * say nothing about what lies between them. An id given back by another user, or forged, does not decrypt to
 * the caller's own; the feed answers it as an id it does not know (`resync`).
 *
 * The form is `c` and 22 base64url characters (shared/plants.ts checks it at the door). A number (the form
 * before) still comes back from pages open across an upgrade: it is answered `resync` too.
 */
const KEY_NAME = 'liveFeedIds';
const MAGIC = 0x66656564; // "feed": a block that decrypts to anything else was not made here
export const EVENT_ID_PREFIX = 'c';

let key: Promise<Buffer> | undefined;

/** The shared key: created if no process has yet (the first insert wins, everyone reads the same row). */
function sharedKey(): Promise<Buffer> {
  key ??= (async () => {
    await db.$executeRaw`INSERT INTO "SharedKey" ("name", "key") VALUES (${KEY_NAME}, ${randomBytes(16)}) ON CONFLICT ("name") DO NOTHING`;
    const row = await db.sharedKey.findUniqueOrThrow({ where: { name: KEY_NAME }, select: { key: true } });
    return Buffer.from(row.key);
  })().catch((error: unknown) => {
    key = undefined;
    throw error;
  });
  return key;
}

export type EventIds = { idOf: (seq: number) => string; positionOf: (id: string) => number | undefined };

/** The ids of one user's feed: the position as the id they are sent, and back (undefined: not one of theirs). */
export async function eventIdsFor(userId: number): Promise<EventIds> {
  const secret = await sharedKey();
  return {
    idOf(seq) {
      const block = Buffer.alloc(16);
      block.writeBigUInt64BE(BigInt(seq), 0);
      block.writeUInt32BE(userId, 8);
      block.writeUInt32BE(MAGIC, 12);
      const cipher = createCipheriv('aes-128-ecb', secret, null).setAutoPadding(false);
      return EVENT_ID_PREFIX + Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url');
    },
    positionOf(id) {
      if (!id.startsWith(EVENT_ID_PREFIX)) return undefined;
      const sealed = Buffer.from(id.slice(EVENT_ID_PREFIX.length), 'base64url');
      if (sealed.length !== 16) return undefined;
      const decipher = createDecipheriv('aes-128-ecb', secret, null).setAutoPadding(false);
      const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
      if (block.readUInt32BE(12) !== MAGIC || block.readUInt32BE(8) !== userId) return undefined;
      const seq = block.readBigUInt64BE(0);
      return seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : undefined;
    },
  };
}
