import { afterEach, describe, expect, it } from 'vitest';

import { db } from '@/server/db/client';
import { revokeToken } from '@/server/tokens/service';
import { IMPORT_KEPT_MS, IMPORTS_KEPT_PER_USER } from '@/shared/limits';
import type { PlantImport } from '@/shared/plant-import';
import { failureOf, signIn } from '@test-support/actors';

import { onPlantsCommitted, type PlantsCommit } from '../events';
import { sweepImports } from './sweep';

/**
 * The import's rules in process, on a real SQLite file: who owns what it creates and what it may change, what
 * the rest of the app hears of an apply, a token revoked mid-way, and what a user keeps. The HTTP contract, the
 * charges and Stop are e2e/api/import.test.ts's.
 */
type Caller = Awaited<ReturnType<typeof signIn>>['caller'];

async function imported(caller: Caller, csv: string): Promise<PlantImport> {
  const started = await caller.plants.imports.create({});
  await caller.plants.imports.part({ id: started.id, part: 1, csv });
  return caller.plants.imports.preview({ id: started.id });
}

async function applied(caller: Caller, id: number): Promise<PlantImport> {
  let state = await caller.plants.imports.run({ id });
  for (let waited = 0; state.state === 'applying' && waited < 30_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    state = await caller.plants.imports.get({ id });
  }
  return state;
}

let stopHearing: (() => void) | undefined;
afterEach(() => stopHearing?.());

// Applies run in the background, in slices with rests between them: seconds on a busy machine.
describe('a CSV import, in process', { timeout: 60_000 }, () => {
  it("creates the importer's own plants; an admin's changes others' plants as a PATCH would, and never their owner", async () => {
    const member = await signIn('import-unit-member');
    const admin = await signIn('import-unit-admin', 'admin');
    await member.caller.plants.create({ id: 31_001n, name: 'Members fern', tag: 'x' });
    const preview = await imported(admin.caller, 'id,name,tag,owner,created\r\n31001,Renamed by admin,x,someone-else,2020-01-01T00:00:00.000Z\r\n31002,New,,import-unit-member,\r\n');
    expect(preview.preview).toEqual({ create: 1, change: 1, unchanged: 0, refused: 0 });
    expect((await applied(admin.caller, preview.id)).applied).toMatchObject({ created: 1, changed: 1 });
    const owners = await db.plant.findMany({ where: { id: { in: [31_001n, 31_002n] } }, orderBy: { id: 'asc' }, select: { id: true, name: true, owner: { select: { name: true } } } });
    expect(owners).toEqual([
      { id: 31_001n, name: 'Renamed by admin', owner: { name: 'import-unit-member' } },
      { id: 31_002n, name: 'New', owner: { name: 'import-unit-admin' } },
    ]);
    // The member's file naming the admin's new plant: taken, as a create of it would say.
    const theirs = await imported(member.caller, 'id,name\n31002,Mine now\n');
    expect(theirs.preview).toEqual({ create: 0, change: 0, unchanged: 0, refused: 1 });
    expect(await member.caller.plants.imports.rows({ id: theirs.id })).toMatchObject([{ error: 40006, message: 'a plant with id 31002 already exists' }]);
  });

  it('is heard as any write of plants: creates with their webhook events, changes without', async () => {
    const { caller } = await signIn('import-unit-events');
    const heard: PlantsCommit[] = [];
    stopHearing = onPlantsCommitted((commit) => heard.push(commit));
    await applied(caller, (await imported(caller, 'id,name\n32001,One\n32002,Two\n')).id);
    expect(heard).toEqual([{ outboxEvents: true }]);
    await applied(caller, (await imported(caller, 'id,name\n32001,One renamed\n')).id);
    expect(heard).toEqual([{ outboxEvents: true }, { outboxEvents: false }]);
    // Applied again: nothing written, nothing to hear.
    await applied(caller, (await imported(caller, 'id,name\n32001,One renamed\n')).id);
    expect(heard).toHaveLength(2);
  });

  it('stops by itself when the token that asked for the apply is revoked, saying why, and goes on with another', async () => {
    const first = await signIn('import-unit-revoked');
    const auth = first.context.auth;
    if (auth.status !== 'signedIn') throw new Error('not signed in');
    const preview = await imported(first.caller, `id,name\n${Array.from({ length: 500 }, (_, index) => `${33_000 + index},Revoked ${index}`).join('\n')}\n`);
    await revokeToken(auth.tokenId);
    const stopped = await applied(first.caller, preview.id);
    expect(stopped).toMatchObject({ state: 'stopped', problem: expect.stringContaining('revoked') });
    expect(stopped.applied.rows).toBe(0);
    const second = await signIn('import-unit-revoked');
    expect((await applied(second.caller, preview.id)).applied).toMatchObject({ rows: 500, created: 500 });
  });

  it(`keeps ${IMPORTS_KEPT_PER_USER} imports a user: the oldest is let go for a new one, and its rows swept with it`, async () => {
    const { caller } = await signIn('import-unit-kept');
    const ids: number[] = [];
    for (let index = 0; index <= IMPORTS_KEPT_PER_USER; index++) ids.push((await imported(caller, `id,name\n${34_000 + index},Kept ${index}\n`)).id);
    expect((await caller.plants.imports.list({})).map((one) => one.id)).toEqual(ids.slice(1).reverse());
    expect(await failureOf(caller.plants.imports.get({ id: ids[0]! }))).toMatchObject({ kind: 'importNotFound' });
    // Swept in slices: its rows, then the import itself.
    while ((await sweepImports(1)).done > 0);
    expect(await db.plantImport.count({ where: { id: ids[0]! } })).toBe(0);
    expect(await db.plantImportRow.count({ where: { importId: ids[0]! } })).toBe(0);
    // Untouched for a day: gone too.
    await db.plantImport.update({ where: { id: ids[1]! }, data: { updatedAtMs: BigInt(Date.now() - IMPORT_KEPT_MS - 1) } });
    expect(await failureOf(caller.plants.imports.get({ id: ids[1]! }))).toMatchObject({ kind: 'importNotFound' });
    while ((await sweepImports(64)).done > 0);
    expect(await db.plantImport.count({ where: { id: { in: ids.slice(0, 2) } } })).toBe(0);
    expect(await db.plantImport.count({ where: { id: { in: ids.slice(2) } } })).toBe(IMPORTS_KEPT_PER_USER - 1);
  });
});
