import { afterEach, beforeEach } from 'vitest';

import { db } from '@/server/db/client';
import { encryptSecret, newSigningSecret } from '@/server/webhooks/secrets';
import { startWebhookWorker, type WebhookWorker, type WorkerOptions } from '@/server/webhooks/delivery/worker';
import { signIn } from '@test-support/actors';
import { type Receiver, startReceiver } from '@test-support/webhook-receiver';

/**
 * What the delivery worker's unit tests share: the real test database and real receivers on loopback, a
 * worker with the retry schedule shrunk (WEBHOOKS_RETRY_BASE_MS = 100, so a backoff takes milliseconds) and
 * its log kept for reading, and endpoints stored as the service stores them. Each test starts from no
 * endpoint and no delivery; workers and receivers are stopped after it.
 */
export const RETRY_BASE_MS = 100;

export function webhookWorkerTests(adminName: string) {
  const key = Buffer.from(process.env.WEBHOOKS_SECRET_KEY!, 'base64');
  const logged: { entry: Record<string, unknown>; message: string }[] = [];
  const keep = (entry: Record<string, unknown>, message: string) => logged.push({ entry, message });
  const log = { info: keep, warn: keep, error: keep };
  const workers: WebhookWorker[] = [];
  const receivers: Receiver[] = [];
  let admin: Awaited<ReturnType<typeof signIn>> | undefined;

  beforeEach(async () => {
    await Promise.all(workers.splice(0).map((started) => started.stop()));
    await db.webhookDelivery.deleteMany();
    await db.webhookEndpoint.deleteMany();
    admin ??= await signIn(adminName, 'admin');
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((started) => started.stop()));
    await Promise.all(receivers.splice(0).map((started) => started.close()));
  });

  return {
    key,
    log,
    logged,
    /** The admin the plants are created as (signed in before the first test). */
    admin: () => admin!,
    worker(options: Partial<WorkerOptions> = {}): WebhookWorker {
      const started = startWebhookWorker({ key, policy: { allowHttp: true, allowPrivate: true }, retryBaseMs: RETRY_BASE_MS, pollMs: 200, leaseMs: 2_000, concurrency: 4, log, ...options });
      workers.push(started);
      return started;
    },
    async receiver(): Promise<Receiver> {
      const started = await startReceiver();
      receivers.push(started);
      return started;
    },
    /** An endpoint row as the service stores it, for a URL the service's own guard (flags unset) would refuse. */
    async endpoint(url: string, events = ',plant.created,plant.deleted,') {
      const secret = newSigningSecret();
      const row = await db.webhookEndpoint.create({ data: { url, events, secret: '', createdAtMs: BigInt(Date.now()) } });
      await db.webhookEndpoint.update({ where: { id: row.id }, data: { secret: encryptSecret(secret, key, row.id) } });
      return { id: row.id, secret };
    },
    deliveries: (endpointId: number) => db.webhookDelivery.findMany({ where: { endpointId }, orderBy: { id: 'asc' } }),
  };
}

/** Reads until `done` holds, every 20 ms; a bound against a hang, not an expectation of speed. */
export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v)).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
