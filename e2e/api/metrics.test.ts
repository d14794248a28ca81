/**
 * `GET /api/metrics` on a real server: the scrape parses as Prometheus's text format, a request moves its own
 * counter by one, hostile paths, methods and names collapse into the fixed set of labels (no id, no raw path:
 * the series count does not grow with them), and only the METRICS_TOKEN holder can read it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { plantBody, setupServer } from '@test-support/api-fixture';
import { projectRoot } from '@test-support/build';
import { testEngine } from '@test-support/database';
import { api } from '@test-support/http-client';
import { startServer } from '@test-support/server-process';

const METRICS_TOKEN = randomBytes(32).toString('hex');

type Sample = { name: string; labels: Record<string, string>; value: number };

/** `a="x",b="y,\"z\""` → [`a="x"`, `b="y,\"z\""`]: commas inside a quoted value do not split. */
function splitLabels(text: string): string[] {
  const pairs: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === '"') quoted = !quoted;
    else if (text[index] === ',' && !quoted) {
      pairs.push(text.slice(start, index));
      start = index + 1;
    }
  }
  if (start < text.length) pairs.push(text.slice(start));
  return pairs;
}

/** Prometheus's text format (version 0.0.4): every sample of a family declared by # TYPE, one value each (Go's ParseFloat reads `Nan` too). */
function parseScrape(text: string): Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const declared = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (declared) {
      if (declared[1] === 'TYPE') types.set(declared[2]!, declared[3]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([+-]?(?:[0-9.e+-]+|Inf|NaN|Nan))$/.exec(line);
    if (!sample) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of splitLabels(sample[2] ?? '')) {
      const equals = pair.indexOf('=');
      labels[pair.slice(0, equals)] = JSON.parse(pair.slice(equals + 1)) as string;
    }
    const name = sample[1]!;
    const family = name.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(name) && !types.has(family)) throw new Error(`${name} has no # TYPE line`);
    samples.push({ name, labels, value: Number(sample[3]!.replace('Inf', 'Infinity').replace(/^Nan$/, 'NaN')) });
  }
  return samples;
}

const requestsTo = (samples: Sample[], labels: Record<string, string>) =>
  samples
    .filter((sample) => sample.name === 'plantstore_http_requests_total' && Object.entries(labels).every(([name, value]) => sample.labels[name] === value))
    .reduce((sum, sample) => sum + sample.value, 0);

describe('GET /api/metrics', () => {
  const server = setupServer({ env: { METRICS_TOKEN, RATE_LIMIT_PER_TOKEN: 'off' } });
  const scrape = async () => {
    const response = await api(server.baseUrl, METRICS_TOKEN).get('/api/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return { text: response.text, samples: parseScrape(response.text) };
  };

  it('answers only the METRICS_TOKEN holder: no token, another token, an admin API token are 401', async () => {
    const anonymous = await server.rawClient(null).get('/api/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect((await api(server.baseUrl, `${METRICS_TOKEN.slice(0, -1)}${METRICS_TOKEN.endsWith('0') ? '1' : '0'}`).get('/api/metrics')).status).toBe(401);
    const admin = await server.rawClient(server.adminToken).get('/api/metrics');
    expect(admin.status).toBe(401);
    expect(admin.text).not.toContain('plantstore_');
    expect((await api(server.baseUrl, METRICS_TOKEN).request('POST', '/api/metrics')).status).toBe(405);
  });

  it("shows the tombstone expiry's backlog: plants deleted for undo past their window, still kept", async () => {
    const [owner] = await server.database.query<{ id: bigint }>('SELECT id FROM "User" ORDER BY id LIMIT 1');
    const expiredAt = Date.now() - 6 * 60 * 1000;
    for (const id of [97_001, 97_002, 97_003]) {
      await server.database.execute(
        'INSERT INTO "PlantTombstone" (id, name, tag, "ownerId", "createdAt", "deletedById", "deletedAtMs") VALUES (?, ?, NULL, ?, ?, ?, ?)',
        [id, `kept ${id}`, owner!.id, await server.database.dateTime(new Date()), owner!.id, expiredAt],
      );
    }
    const backlog = (await scrape()).samples.find((sample) => sample.name === 'plantstore_background_backlog' && sample.labels.job === 'tombstone-expiry');
    const [left] = await server.database.query<{ rows: bigint }>('SELECT COUNT(*) AS rows FROM "PlantTombstone" WHERE id IN (97001, 97002, 97003)');
    // The expiry runs every minute: the gauge counts the three, or none if it ran between the insert and the scrape.
    expect([3, Number(left!.rows)]).toContain(backlog?.value);
  });

  it("shows /api/health's webhook figures to the METRICS_TOKEN holder only: anonymous callers and API tokens see status and database", async () => {
    const anonymous = await server.rawClient(null).get('/api/health');
    expect(anonymous.status).toBe(200);
    expect(anonymous.json).toEqual({ status: 'ok', database: 'ok' });
    expect((await server.rawClient(server.adminToken).get('/api/health')).json).toEqual({ status: 'ok', database: 'ok' });
    const operator = await api(server.baseUrl, METRICS_TOKEN).get('/api/health');
    expect(operator.json).toEqual({ status: 'ok', database: 'ok', webhooks: { pending: 0n, failing: 0n, failed: 0n } });
  });

  it('is Prometheus text with the documented families, and a request moves its own counter by one', async () => {
    const { samples, text } = await scrape();
    const families = new Set(samples.map((sample) => sample.name.replace(/_(bucket|sum|count)$/, '')));
    for (const family of [
      'plantstore_http_requests_total',
      'plantstore_http_request_duration_seconds',
      'plantstore_db_statement_duration_seconds',
      'plantstore_webhook_pending_deliveries',
      'plantstore_webhook_oldest_pending_age_seconds',
      'plantstore_background_backlog',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(families, family).toContain(family);
    }
    const names = new Set(samples.map((sample) => sample.name));
    // The PostgreSQL pool's gauges exist on PostgreSQL only.
    if (testEngine === 'postgresql') for (const family of ['plantstore_db_pool_connections', 'plantstore_db_pool_waiting', 'plantstore_db_pool_max']) expect(names).toContain(family);
    // Every metric docs/grafana-dashboard.json queries is one this server exposes.
    const dashboard = readFileSync(path.join(projectRoot, 'docs/grafana-dashboard.json'), 'utf8');
    const queried = new Set([...dashboard.matchAll(/\b(?:plantstore|process|nodejs)_[a-z0-9_]+/g)].map(([name]) => name));
    expect(queried.size).toBeGreaterThan(10);
    // Declared by a # TYPE line: a labelled counter has no sample until its first event (a webhook delivery, a 429).
    const declared = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map(([, name]) => name!));
    for (const name of queried) {
      if (testEngine === 'postgresql' || !name.startsWith('plantstore_db_pool')) expect(declared, `the dashboard's ${name}`).toContain(name.replace(/_bucket$/, ''));
    }

    const notFound = { door: 'rest', route: '/api/plants/{id}', method: 'DELETE', status: '404' };
    const listed = { door: 'rest', route: '/api/plants', method: 'GET', status: '200' };
    const before = await scrape();
    expect((await server.admin.delete('/api/plants/9123456789')).status).toBe(404);
    expect((await server.admin.get('/api/plants?limit=1')).status).toBe(200);
    const after = await scrape();
    expect(requestsTo(after.samples, notFound) - requestsTo(before.samples, notFound)).toBe(1);
    expect(requestsTo(after.samples, listed) - requestsTo(before.samples, listed)).toBe(1);
    const durations = (samples: Sample[]) =>
      samples.find((sample) => sample.name === 'plantstore_http_request_duration_seconds_count' && sample.labels.route === '/api/plants' && sample.labels.method === 'GET')?.value ?? 0;
    expect(durations(after.samples) - durations(before.samples)).toBe(1);
  });

  it('keeps ids, raw paths, methods and names a client chooses out of the labels: hostile requests add no series', async () => {
    const hostileRound = async () => {
      const mark = randomBytes(6).toString('hex');
      const id = String(BigInt(`0x${randomBytes(6).toString('hex')}`));
      const admin = server.rawClient(server.adminToken);
      await Promise.all([
        admin.delete(`/api/plants/${id}`),
        admin.request('PATCH', `/api/plants/${id}`, { body: '{"name":"x"}' }),
        admin.get(`/api/plants/${mark}/deeper/${id}`),
        admin.get(`/api/${mark}`),
        admin.request(`M${mark.toUpperCase()}`, '/api/plants'),
        admin.post(`/api/trpc/${mark}.list`, '{}'),
        admin.get(`/api/trpc/plants.list,${mark}?batch=1&input={}`),
        admin.get(`/api/docs/${mark}`),
        admin.get(`/${mark}/${id}`),
        admin.post('/api/plants', plantBody(BigInt(id), `plant ${mark}`)),
        admin.delete(`/api/webhooks/endpoints/${id}`),
        api(server.baseUrl, `pst_${mark}`).get('/api/plants'),
      ]);
      return { mark, id };
    };
    await hostileRound();
    const first = await scrape();
    const { mark, id } = await hostileRound();
    const second = await scrape();

    const ours = second.samples.filter((sample) => sample.name.startsWith('plantstore_'));
    const values = ours.flatMap((sample) => Object.entries(sample.labels).filter(([name]) => name !== 'le'));
    expect(values.filter(([, value]) => value.includes(mark) || value.includes(id))).toEqual([]);
    // Routes are templates or the one value for everything unknown; methods are the known ones or OTHER.
    for (const [name, value] of values) {
      if (name === 'route') expect(value).toMatch(/^(\/api\/[a-z/{}.-]+|\/api\/trpc\/[a-zA-Z.()]+|\(unmatched\)|\(pages\)|\(front\))$/);
      if (name === 'method') expect(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER']).toContain(value);
      if (name === 'status') expect(value).toMatch(/^(0|[1-5]\d\d)$/);
    }
    // The second round of new ids and names made no new series.
    const series = (samples: Sample[]) => new Set(samples.filter((sample) => sample.name.startsWith('plantstore_')).map((sample) => `${sample.name}${JSON.stringify(sample.labels)}`));
    expect([...series(second.samples)].filter((key) => !series(first.samples).has(key))).toEqual([]);
    const authFailures = second.samples.filter((sample) => sample.name === 'plantstore_auth_failures_total').reduce((sum, sample) => sum + sample.value, 0);
    expect(authFailures).toBeGreaterThanOrEqual(2);
  });
});

describe('without METRICS_TOKEN', () => {
  it('has no metrics path at all (404), whoever asks', async () => {
    const server = await startServer();
    try {
      expect((await api(server.baseUrl, server.adminToken).get('/api/metrics')).status).toBe(404);
      expect((await api(server.baseUrl, null).get('/api/metrics')).status).toBe(404);
    } finally {
      await server.stop();
    }
  });
});
