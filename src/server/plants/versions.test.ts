import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { databaseFilePath } from '@/server/db/migrate-sqlite';
import { actorOf as actorSignedIn, signIn } from '@test-support/actors';

import { plantScope } from './scope';
import { keepPlantListVersions, plantListVersion, readPlantListVersion } from './versions';
import { watchSqliteVersions } from './version-watch';

/**
 * The list versions kept in the process on SQLite (plants/version-watch.ts) against the table they stand
 * for: every commit, by this process's client or by another connection to the file, is seen by the next
 * read, and the kept answer is always the table's.
 */

const databaseUrl = process.env.DATABASE_URL!;

async function actorOf(name: string, role: 'admin' | 'member' = 'member'): Promise<Actor> {
  return actorSignedIn(await signIn(name, role));
}

/** The version as a request gets it: at once when kept, else by running the read. */
async function versionOf(actor: Actor): Promise<string> {
  const version = plantListVersion(actor);
  return typeof version === 'string' ? version : version();
}

const insertPlant = (ownerId: number, id: bigint, name: string) =>
  db.$executeRaw`INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") VALUES (${id}, ${name}, ${name.toLowerCase()}, ${ownerId}, CURRENT_TIMESTAMP)`;

let stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops) stop();
  stops = [];
});

describe('plant list versions kept in the process (SQLite)', () => {
  it('answers at once, and the answer is the table\'s after commits by this process and by another connection', async () => {
    stops.push(keepPlantListVersions(databaseUrl).stop);
    const member = await actorOf('versions-member');
    const admin = await actorOf('versions-admin', 'admin');
    const neighbour = await actorOf('versions-neighbour');
    const table = (actor: Actor) => readPlantListVersion(plantScope(actor));

    expect(plantListVersion(member)).toBe(`owner ${member.userId}:0`);
    const adminAtStart = plantListVersion(admin);
    expect(adminAtStart).toBe(await table(admin));

    // A commit through this process's client (Prisma's connection).
    await insertPlant(member.userId, 41_001n, 'Fern');
    expect(plantListVersion(member)).toBe(`owner ${member.userId}:1`);
    expect(plantListVersion(admin)).toBe(await table(admin));
    expect(plantListVersion(admin)).not.toBe(adminAtStart);

    // A commit by another connection to the file, as another process makes it.
    const other = new Database(databaseFilePath(databaseUrl));
    try {
      other.prepare('UPDATE "Plant" SET "name" = ?, "nameFolded" = ? WHERE "id" = ?').run('Fern II', 'fern ii', 41_001n);
    } finally {
      other.close();
    }
    expect(plantListVersion(member)).toBe(`owner ${member.userId}:2`);
    expect(plantListVersion(admin)).toBe(await table(admin));

    // Another owner's change moves the admin's version, not the member's.
    const memberBefore = plantListVersion(member);
    await insertPlant(neighbour.userId, 41_002n, 'Cactus');
    expect(plantListVersion(member)).toBe(memberBefore);
    for (const actor of [member, admin, neighbour]) expect(plantListVersion(actor)).toBe(await table(actor));
  });

  it('keeps nothing until asked to, nor after being stopped: the version is then read through the client', async () => {
    const member = await actorOf('versions-unkept');
    await insertPlant(member.userId, 42_001n, 'Aloe');
    expect(typeof plantListVersion(member)).toBe('function');
    expect(await versionOf(member)).toBe(`owner ${member.userId}:1`);

    const kept = keepPlantListVersions(databaseUrl);
    expect(plantListVersion(member)).toBe(`owner ${member.userId}:1`);
    kept.stop();
    await insertPlant(member.userId, 42_002n, 'Agave');
    expect(typeof plantListVersion(member)).toBe('function');
    expect(await versionOf(member)).toBe(`owner ${member.userId}:2`);
    // PostgreSQL keeps nothing in the process (versions.ts says why).
    stops.push(keepPlantListVersions('postgresql://localhost/none').stop);
    expect(typeof plantListVersion(member)).toBe('function');
  });

  it('sees a change once it is committed, never before, and fails loudly once closed (the caller then reads through the client)', async () => {
    const member = await actorOf('versions-quiet');
    const watch = watchSqliteVersions(databaseFilePath(databaseUrl));
    const scope = plantScope(member);
    expect(watch.version(scope)).toBe(`owner ${member.userId}:0`);
    // A change not committed yet is not seen (the app's own transactions are such changes); its commit is.
    const other = new Database(databaseFilePath(databaseUrl));
    try {
      other.exec('BEGIN IMMEDIATE');
      other.prepare('INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (?, 5)').run(member.userId);
      expect(watch.version(scope)).toBe(`owner ${member.userId}:0`);
      other.exec('COMMIT');
      expect(watch.version(scope)).toBe(`owner ${member.userId}:5`);
    } finally {
      other.close();
    }
    watch.close();
    expect(() => watch.version(scope)).toThrow();
  });
});
