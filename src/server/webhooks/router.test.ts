import { beforeEach, describe, expect, it } from 'vitest';

import { db } from '@/server/db/client';
import { failureOf, signIn } from '@test-support/actors';

import { signingSecrets } from './secrets';

const PUBLIC_URL = 'https://93.184.215.14/hooks/plants';
const key = Buffer.from(process.env.WEBHOOKS_SECRET_KEY!, 'base64');

beforeEach(async () => {
  await db.webhookDelivery.deleteMany();
  await db.webhookEndpoint.deleteMany();
});

describe('webhook endpoints', () => {
  it('are for admins only', async () => {
    const { caller } = await signIn('hooks-member');
    expect(await failureOf(caller.webhooks.list({}))).toMatchObject({ code: 'FORBIDDEN', kind: 'forbidden' });
    expect(await failureOf(caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created'] }))).toMatchObject({ kind: 'forbidden' });
    expect(await failureOf(caller.webhooks.retry({ id: 1 }))).toMatchObject({ kind: 'forbidden' });
  });

  it('show the signing secret once, and store only a ciphertext of it', async () => {
    const { caller } = await signIn('hooks-admin', 'admin');
    const created = await caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.deleted', 'plant.created'], description: 'the shop' });
    expect(created).toMatchObject({
      url: PUBLIC_URL,
      events: ['plant.created', 'plant.deleted'],
      enabled: true,
      description: 'the shop',
      disabledReason: null,
      failingSince: null,
      pending: 0,
      failed: 0,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await caller.webhooks.list({});
    expect(listed).toEqual([expect.objectContaining({ id: created.id, url: PUBLIC_URL })]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(JSON.stringify(await caller.webhooks.get({ id: created.id }))).not.toContain(created.secret);

    const row = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.secret).not.toContain(created.secret.slice(6));
    expect(signingSecrets(row, key)).toEqual([created.secret]);
  });

  it('rotate the secret: the new one shown once, the old one still signing for a day', async () => {
    const { caller } = await signIn('hooks-rotator', 'admin');
    const created = await caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created'] });
    const rotated = await caller.webhooks.rotateSecret({ id: created.id });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.previousValidUntil) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    const row = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(signingSecrets(row, key)).toEqual([rotated.secret, created.secret]);
    expect(signingSecrets(row, key, Date.parse(rotated.previousValidUntil) + 1)).toEqual([rotated.secret]);
    expect(await failureOf(caller.webhooks.rotateSecret({ id: created.id + 1000 }))).toMatchObject({ code: 'NOT_FOUND', kind: 'webhookEndpointNotFound' });
  });

  it('refuse URLs the SSRF guard refuses, naming the reason', async () => {
    const { caller } = await signIn('hooks-attacker', 'admin');
    const cases: [string, RegExp][] = [
      ['http://93.184.215.14/', /must use https/],
      ['https://127.0.0.1/', /loopback/],
      ['https://2130706433/', /loopback/],
      ['https://[::ffff:127.0.0.1]/', /loopback/],
      ['https://169.254.169.254/latest/meta-data/', /link-local/],
      ['https://localhost:8443/', /loopback/],
      ['https://admin:pw@93.184.215.14/', /user name or password/],
      ['gopher://93.184.215.14/', /must use https/],
    ];
    for (const [url, message] of cases) {
      expect(await failureOf(caller.webhooks.create({ url, events: ['plant.created'] })), url).toMatchObject({
        code: 'BAD_REQUEST',
        kind: 'webhookUrlNotAllowed',
        field: 'url',
        message: expect.stringMatching(message),
      });
    }
    const created = await caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created'] });
    expect(await failureOf(caller.webhooks.update({ id: created.id, url: 'https://10.0.0.1/' }))).toMatchObject({ kind: 'webhookUrlNotAllowed' });
    expect(await db.webhookEndpoint.count()).toBe(1);
  });

  it('validate events and the rest of the input', async () => {
    const { caller } = await signIn('hooks-validator', 'admin');
    // @ts-expect-error an event type that does not exist
    expect(await failureOf(caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.eaten'] }))).toMatchObject({ kind: 'invalidValue' });
    expect(await failureOf(caller.webhooks.create({ url: PUBLIC_URL, events: [] }))).toMatchObject({ kind: 'invalidValue' });
    expect(await failureOf(caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created', 'plant.created'] }))).toMatchObject({ kind: 'invalidValue' });
    // @ts-expect-error a field that does not exist
    expect(await failureOf(caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created'], secret: 'mine' }))).toMatchObject({ kind: 'unknownField' });
    expect(await failureOf(caller.webhooks.get({ id: 999_999 }))).toMatchObject({ code: 'NOT_FOUND', kind: 'webhookEndpointNotFound' });
    expect(await failureOf(caller.webhooks.delete({ id: 999_999 }))).toMatchObject({ kind: 'webhookEndpointNotFound' });
    expect(await failureOf(caller.webhooks.update({ id: 999_999, enabled: false }))).toMatchObject({ kind: 'webhookEndpointNotFound' });
  });
});

describe('the outbox', () => {
  it('queues each create and delete for every enabled endpoint that wants it, with the plant exact', async () => {
    const admin = await signIn('outbox-admin', 'admin');
    const member = await signIn('outbox-member');
    const both = await admin.caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created', 'plant.deleted'] });
    const deletesOnly = await admin.caller.webhooks.create({ url: `${PUBLIC_URL}/deletes`, events: ['plant.deleted'] });
    const disabled = await admin.caller.webhooks.create({ url: `${PUBLIC_URL}/off`, events: ['plant.created', 'plant.deleted'], enabled: false });

    await member.caller.plants.create({ id: 9007199254740993n, name: 'Fern "quoted"', tag: 'shade' });
    await member.caller.plants.delete({ id: 9007199254740993n });

    const rows = await db.webhookDelivery.findMany({ orderBy: { id: 'asc' } });
    expect(rows.map((row) => [row.endpointId, row.type, row.status])).toEqual([
      [both.id, 'plant.created', 'pending'],
      [both.id, 'plant.deleted', 'pending'],
      [deletesOnly.id, 'plant.deleted', 'pending'],
    ]);
    expect(rows.some((row) => row.endpointId === disabled.id)).toBe(false);
    const created = JSON.parse(rows[0]!.payload.replace(/"id":(\d+)/, '"id":"$1"'));
    expect(created).toEqual({ type: 'plant.created', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), data: { id: '9007199254740993', name: 'Fern "quoted"', tag: 'shade' } });
    expect(rows[1]!.payload).toContain('"data":{"id":9007199254740993,"name":"Fern \\"quoted\\"","tag":"shade"}');
    // One event id per event, shared by the endpoints it goes to.
    expect(rows[1]!.eventId).toBe(rows[2]!.eventId);
    expect(rows[0]!.eventId).not.toBe(rows[1]!.eventId);
    expect(rows[0]!.eventId).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it('writes nothing for a create or delete that fails, and nothing when no endpoint exists', async () => {
    const admin = await signIn('outbox-failures', 'admin');
    await admin.caller.plants.create({ id: 7001n, name: 'before any endpoint' });
    expect(await db.webhookDelivery.count()).toBe(0);
    await admin.caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created', 'plant.deleted'] });
    await failureOf(admin.caller.plants.create({ id: 7001n, name: 'taken' }));
    await failureOf(admin.caller.plants.delete({ id: 7999n }));
    expect(await db.webhookDelivery.count()).toBe(0);
  });

  it('is the same transaction as the change: when the event cannot be written, the plant is not created or deleted', async () => {
    const admin = await signIn('outbox-atomic', 'admin');
    await admin.caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created', 'plant.deleted'] });
    await admin.caller.plants.create({ id: 7101n, name: 'kept' });
    await db.$executeRawUnsafe(`CREATE TRIGGER "outbox_broken" BEFORE INSERT ON "WebhookDelivery" BEGIN SELECT RAISE(ABORT, 'outbox broken'); END`);
    try {
      await expect(admin.caller.plants.create({ id: 7102n, name: 'never' })).rejects.toThrow();
      await expect(admin.caller.plants.delete({ id: 7101n })).rejects.toThrow();
    } finally {
      await db.$executeRawUnsafe('DROP TRIGGER "outbox_broken"');
    }
    expect((await admin.caller.plants.list({ after: 7100n, limit: 10 })).map((plant) => plant.id)).toEqual([7101n]);
    expect(await db.webhookDelivery.count()).toBe(1);
  });
});

describe('the delivery log', () => {
  it('pages newest first, filters by status, retries now and sends test events', async () => {
    const admin = await signIn('log-admin', 'admin');
    const endpoint = await admin.caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created'] });
    for (let id = 7201n; id <= 7205n; id++) await admin.caller.plants.create({ id, name: `p${id}` });
    const all = await db.webhookDelivery.findMany({ orderBy: { id: 'asc' }, select: { id: true } });
    await db.webhookDelivery.update({ where: { id: all[0]!.id }, data: { status: 'failed', attempts: 14, lastStatus: 500, lastError: 'answered 500', lastResponse: '<script>alert(1)</script>' } });

    const first = await admin.caller.webhooks.deliveries({ id: endpoint.id, limit: 2 });
    expect(first.map((delivery) => delivery.id)).toEqual([all[4]!.id, all[3]!.id]);
    expect(admin.context.responseHints.nextPageQuery).toEqual({ limit: '2', before: String(all[3]!.id) });
    admin.context.responseHints.nextPageQuery = undefined;
    const rest = await admin.caller.webhooks.deliveries({ id: endpoint.id, limit: 10, before: all[3]!.id });
    expect(rest.map((delivery) => delivery.id)).toEqual([all[2]!.id, all[1]!.id, all[0]!.id]);
    expect(admin.context.responseHints.nextPageQuery).toBeUndefined();
    expect(rest[0]).toMatchObject({ type: 'plant.created', plantId: 7203n, status: 'pending', attempts: 0, nextAttemptAt: expect.any(String), deliveredAt: null });

    const failed = await admin.caller.webhooks.deliveries({ id: endpoint.id, status: 'failed' });
    expect(failed).toEqual([expect.objectContaining({ id: all[0]!.id, status: 'failed', nextAttemptAt: null, lastResponse: '<script>alert(1)</script>' })]);
    expect((await admin.caller.webhooks.list({}))[0]).toMatchObject({ pending: 4, failed: 1 });

    const retried = await admin.caller.webhooks.retry({ id: all[0]!.id });
    expect(retried).toMatchObject({ status: 'pending', attempts: 14 });
    expect(Date.parse(retried.nextAttemptAt!)).toBeLessThanOrEqual(Date.now());

    const test = await admin.caller.webhooks.sendTest({ id: endpoint.id });
    expect(test).toMatchObject({ endpointId: endpoint.id, type: 'webhook.test', plantId: null, status: 'pending' });
    // The webhook-id docs/webhooks.md promises for every event, the test event's too.
    expect(test.eventId).toMatch(/^msg_[0-9a-f]{32}$/);

    // The plant id is read from the body exactly, past what a double holds.
    await admin.caller.plants.create({ id: 9223372036854775807n, name: 'largest' });
    await admin.caller.plants.delete({ id: 9223372036854775807n });
    expect((await admin.caller.webhooks.deliveries({ id: endpoint.id, limit: 1 }))[0]).toMatchObject({ type: 'plant.created', plantId: 9223372036854775807n });
    expect(await failureOf(admin.caller.webhooks.sendTest({ id: endpoint.id + 1000 }))).toMatchObject({ kind: 'webhookEndpointNotFound' });
    expect(await failureOf(admin.caller.webhooks.retry({ id: 999_999 }))).toMatchObject({ code: 'NOT_FOUND', kind: 'webhookDeliveryNotFound' });
    expect(await failureOf(admin.caller.webhooks.deliveries({ id: endpoint.id + 1000 }))).toMatchObject({ kind: 'webhookEndpointNotFound' });

    await admin.caller.webhooks.delete({ id: endpoint.id });
    expect(await db.webhookDelivery.count()).toBe(0);
  });

  it('re-enabling an endpoint clears what the server recorded against it', async () => {
    const admin = await signIn('log-enabler', 'admin');
    const endpoint = await admin.caller.webhooks.create({ url: PUBLIC_URL, events: ['plant.created'] });
    await db.webhookEndpoint.update({ where: { id: endpoint.id }, data: { enabled: false, failingSinceMs: 1n, disabledReason: 'failing' } });
    expect(await admin.caller.webhooks.get({ id: endpoint.id })).toMatchObject({ enabled: false, disabledReason: 'failing', failingSince: '1970-01-01T00:00:00.001Z' });
    expect(await admin.caller.webhooks.update({ id: endpoint.id, enabled: true, events: ['plant.deleted'] })).toMatchObject({
      enabled: true,
      disabledReason: null,
      failingSince: null,
      events: ['plant.deleted'],
    });
  });
});
