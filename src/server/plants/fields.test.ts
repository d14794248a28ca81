import fs from 'node:fs';
import path from 'node:path';

import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';

import { Prisma } from '@/generated/prisma/client';
import { db } from '@/server/db/client';
import { engineLayouts } from '@/server/db/engines';
import { projectRoot } from '@/server/paths';
import { eventPayload } from '@/server/webhooks/outbox';
import { OPTIONAL_PLANT_FIELDS, type Plant, PLANT_FIELD_NAMES, type StoredFields, toPlant } from '@/shared/plants';
import { latestWebhookOutboxMigration, webhookPayloadMembers } from '@/tooling/plant-event-sql';
import { signIn } from '@test-support/actors';
import { exampleOf, withEveryField } from '@test-support/plant-fields';

import { plantsCsv } from './export';

/**
 * The plant's fields are declared once (shared/plants.ts, `plantFields`) and everything else is derived. These
 * tests hold what cannot be derived to the declaration (the Prisma models, the webhook triggers' SQL, which a
 * migration wrote; the other triggers the fields decide: src/tooling/plant-field-triggers.test.ts and
 * e2e/api/plant-field-triggers.test.ts), and carry a plant with every declared field set through every path a
 * plant takes, so a path that drops a field fails here, whatever the field is.
 */

const ANSWER_KEYS = ['id', ...PLANT_FIELD_NAMES];

describe('the declared plant fields', () => {
  it('are columns of Plant, of PlantTombstone (what undo keeps) and of PlantChange (the live feed\'s log)', () => {
    expect(Object.keys(Prisma.PlantScalarFieldEnum)).toEqual(expect.arrayContaining(ANSWER_KEYS));
    expect(Object.keys(Prisma.PlantTombstoneScalarFieldEnum)).toEqual(expect.arrayContaining(ANSWER_KEYS));
    expect(Object.keys(Prisma.PlantChangeScalarFieldEnum)).toEqual(expect.arrayContaining(PLANT_FIELD_NAMES));
  });

  it('are each a row of the Plants table in docs/api.md, in order (its words are written by hand)', () => {
    const api = fs.readFileSync(path.join(projectRoot, 'docs', 'api.md'), 'utf8');
    const table = api.slice(api.indexOf('\n## Plants\n'), api.indexOf('\n## ', api.indexOf('\n## Plants\n') + 1));
    expect([...table.matchAll(/^\| `(\w+)` \|/gm)].map((row) => row[1])).toEqual(ANSWER_KEYS);
  });

  it("are what the live feed's log holds of a create and an update (SQLite's triggers, live), as the feed's events carry them", async () => {
    const { caller } = await signIn('fields-live');
    const plant = withEveryField(7_201n);
    await caller.plants.create(plant);
    const changed = withEveryField(7_201n, ' II');
    const { id, ...patch } = changed;
    await caller.plants.update({ id, ...patch });
    const logged = await db.plantChange.findMany({ where: { plantId: id }, orderBy: { seq: 'asc' } });
    const stored = (row: Record<string, unknown>) => Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, row[field]]));
    expect(logged.map((row) => [row.kind, stored(row)])).toEqual([
      ['created', stored(plant)],
      ['updated', stored(changed)],
    ]);
    expect(toPlant({ id, ...(stored(logged[1]!) as StoredFields) })).toEqual(changed);
  });

  it('are carried through create, list, page, patch, export, delete with undo and restore, in order', async () => {
    const { caller, context } = await signIn('fields-owner');
    const plant = withEveryField(7_001n);
    const created = await caller.plants.create(plant);
    expect(created).toEqual(plant);
    expect(Object.keys(created)).toEqual(ANSWER_KEYS);
    expect(await caller.plants.list({})).toEqual([plant]);
    expect((await caller.plants.page({ size: 10 })).rows).toEqual([plant]);

    const changed = withEveryField(7_001n, ' II');
    const { id, ...patch } = changed;
    expect(await caller.plants.update({ id, ...patch })).toEqual(changed);
    for (const field of OPTIONAL_PLANT_FIELDS) {
      const removed = await caller.plants.update({ id, [field]: null });
      expect(removed).not.toHaveProperty(field);
      await caller.plants.update({ id, [field]: changed[field] });
    }
    expect(await caller.plants.list({})).toEqual([changed]);

    if (context.auth.status !== 'signedIn') throw new Error('signed in above');
    let csv = '';
    for await (const chunk of plantsCsv(context.auth.actor, () => undefined, {})) csv += chunk;
    const [header, row] = csv.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    expect(header).toBe(ANSWER_KEYS.join(','));
    expect(row).toBe(ANSWER_KEYS.map((key) => String(changed[key as keyof Plant])).join(','));

    expect((await caller.plants.deleteMany({ selection: { kind: 'ids', ids: [id] }, keepForUndo: true })).done).toEqual([id]);
    expect(await caller.plants.list({})).toEqual([]);
    expect((await caller.plants.restore({ ids: [id] })).restored).toEqual([id]);
    expect(await caller.plants.list({})).toEqual([changed]);
  });

  it("are the webhook event's data, byte for byte as eventPayload writes a plant (SQLite's triggers, live)", async () => {
    const endpoint = await db.webhookEndpoint.create({
      data: { url: 'https://receiver.example/fields', events: ',plant.created,plant.deleted,', secret: 'unused here', createdAtMs: 0n },
      select: { id: true },
    });
    try {
      const { caller } = await signIn('fields-webhooks');
      const plant = withEveryField(7_101n);
      await caller.plants.create(plant);
      await caller.plants.delete({ id: plant.id });
      const untagged = { id: 7_102n, ...Object.fromEntries(PLANT_FIELD_NAMES.filter((field) => !OPTIONAL_PLANT_FIELDS.includes(field)).map((field) => [field, exampleOf(field)])) } as Plant;
      await caller.plants.create(untagged);
      const deliveries = await db.webhookDelivery.findMany({ where: { endpointId: endpoint.id }, orderBy: { id: 'asc' }, select: { type: true, payload: true } });
      const expected = [
        ['plant.created', plant],
        ['plant.deleted', plant],
        ['plant.created', untagged],
      ] as const;
      expect(deliveries.map((delivery) => delivery.type)).toEqual(expected.map(([type]) => type));
      for (const [index, [type, data]] of expected.entries()) {
        const { payload } = deliveries[index]!;
        const at = new Date((parse(payload) as { timestamp: string }).timestamp);
        expect(payload).toBe(eventPayload(type, data, at));
      }
    } finally {
      await db.webhookDelivery.deleteMany({ where: { endpointId: endpoint.id } });
      await db.webhookEndpoint.delete({ where: { id: endpoint.id } });
    }
  });
});

describe('the webhook triggers (SQL a migration wrote; a migration that changes the fields rewrites them: docs/adding-a-field.md)', () => {
  const declared = ANSWER_KEYS.map((key) => [key, key]);

  it("SQLite's write the declared fields, each from its own column, and leave out an optional one that is NULL", () => {
    const sql = latestWebhookOutboxMigration('sqlite', engineLayouts.sqlite.migrationsDir);
    for (const row of ['NEW', 'OLD'] as const) {
      expect(webhookPayloadMembers('sqlite', sql, row)).toEqual(declared);
      for (const field of OPTIONAL_PLANT_FIELDS) expect(sql).toContain(`WHEN ${row}."${field}" IS NULL`);
    }
  });

  it("PostgreSQL's write the declared fields, each from its own column, and leave out an optional one that is NULL", () => {
    const sql = latestWebhookOutboxMigration('postgresql', engineLayouts.postgresql.migrationsDir);
    expect(webhookPayloadMembers('postgresql', sql)).toEqual(declared);
    for (const field of OPTIONAL_PLANT_FIELDS) expect(sql).toContain(`WHEN plant."${field}" IS NULL THEN ''`);
  });
});
