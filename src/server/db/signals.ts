import 'server-only';

import Database from 'better-sqlite3';
import pg from 'pg';

import { databaseEngine, postgresConnection } from '@/server/db/database-url';
import { databaseFilePath } from '@/server/db/migrate-sqlite';
import { watchDatabaseSignals } from '@/server/observability/metrics';

/**
 * What other processes and instances commit, heard as it commits instead of polled: the seam through which the
 * token cache, the streams a token holds open, the live feed and the kept list versions learn that the database
 * changed under them.
 *
 * - `access`: something that decides access changed (a token revoked, its expiry or owner changed, a user's role
 *   or name changed, a token or user deleted). Triggers bump the AccessVersion row in the statement that makes
 *   the change, whoever made it (migration *_access_version_and_signals).
 * - `plants`: a change of plants committed (the live feed's log grew, list versions moved): the owners whose
 *   plants changed, or `all` when that is not said (SQLite; a change of very many owners).
 *
 * PostgreSQL: one connection of its own (never the pool's) LISTENs on `plant_store_access` and
 * `plant_store_plants`, which the same triggers NOTIFY; a notification is delivered when its transaction
 * commits. The connection also answers a heartbeat every HEARTBEAT_MS: what is heard is trusted (`heard()`) only
 * until HEARD_FOR_MS after the last heartbeat that was answered, because a connection can die without a word
 * (a dropped network path). Lost, it is opened again with a growing pause; while it is down the listeners fall
 * back (the token cache to its lifetime, the feed to polling, the list versions to a query per request), and once
 * it is back the AccessVersion read then says whether access changed meanwhile.
 *
 * SQLite: a read-only connection of its own looks at `PRAGMA data_version` every SQLITE_WATCH_MS, one synchronous
 * look at the file's shared memory that changes whenever another connection commits (the server's own, the token
 * command's, a sqlite3 shell's); only then does it read the AccessVersion row. A local file is always heard.
 */
const HEARTBEAT_MS = 1_000;
/** How long after a heartbeat was sent its answer still vouches that every notification committed before it came. */
const HEARD_FOR_MS = 3_000;
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
export const SQLITE_WATCH_MS = 25;

const ACCESS_CHANNEL = 'plant_store_access';
const PLANTS_CHANNEL = 'plant_store_plants';

/** The owners whose plants changed, or all of them. */
export type ChangedOwners = readonly number[] | 'all';
type Listeners = { access: () => void; plants: (owners: ChangedOwners) => void };
export type DatabaseSignal = keyof Listeners;

const listeners: { [Signal in DatabaseSignal]: Set<Listeners[Signal]> } = { access: new Set(), plants: new Set() };
const heardListeners = new Set<(heard: boolean) => void>();
/** Until when what is heard is complete (ms since the epoch): 0 while not listening, Infinity for a SQLite file. */
let heardUntil = 0;
let announcedHeard = false;

/** Hears `signal` from now on; returns the way to stop. */
export function onDatabaseSignal<Signal extends DatabaseSignal>(signal: Signal, listener: Listeners[Signal]): () => void {
  const set = listeners[signal] as Set<Listeners[Signal]>;
  set.add(listener);
  return () => set.delete(listener);
}

/**
 * Told when hearing starts (true: anything kept from before may be stale, so look again now) and when it is
 * lost (false: fall back to asking the database).
 */
export function onHeardChange(listener: (heard: boolean) => void): () => void {
  heardListeners.add(listener);
  return () => heardListeners.delete(listener);
}

/** Whether every commit of every process is heard now, so what was kept until the last signal can be trusted. */
export function signalsHeard(now = Date.now()): boolean {
  return now < heardUntil;
}

function emitAccess(): void {
  for (const listener of listeners.access) listener();
}

function emitPlants(owners: ChangedOwners): void {
  for (const listener of listeners.plants) listener(owners);
}

function announceHeard(heard: boolean): void {
  if (announcedHeard === heard) return;
  announcedHeard = heard;
  for (const listener of heardListeners) listener(heard);
}

export type SignalsLog = { warn: (fields: object, message: string) => void; info: (fields: object, message: string) => void };

/**
 * Starts hearing the database DATABASE_URL names, once per process (main.ts, after openDatabase). Resolves when
 * the first attempt to listen has ended, heard or not: a start never waits for the listening connection.
 */
export async function startDatabaseSignals(databaseUrl: string, log: SignalsLog): Promise<{ stop: () => Promise<void> }> {
  watchDatabaseSignals(() => signalsHeard());
  return databaseEngine(databaseUrl) === 'sqlite' ? watchSqlite(databaseFilePath(databaseUrl)) : listenPostgres(databaseUrl, log);
}

function watchSqlite(file: string): { stop: () => Promise<void> } {
  const connection = new Database(file, { readonly: true, fileMustExist: true, timeout: 100 });
  const dataVersion = connection.prepare('PRAGMA data_version').pluck();
  const accessVersion = connection.prepare('SELECT CAST("version" AS TEXT) FROM "AccessVersion" WHERE "id" = 1').pluck();
  let seen = dataVersion.get();
  let access = accessVersion.get();
  const timer = setInterval(() => {
    try {
      const now = dataVersion.get();
      if (now === seen) return;
      seen = now;
      // Read after data_version: a commit in between changes data_version again, and the next look reads again.
      const version = accessVersion.get();
      if (version !== access) {
        access = version;
        emitAccess();
      }
      emitPlants('all');
    } catch {
      // A lock held past the connection's timeout: the next look tries again.
    }
  }, SQLITE_WATCH_MS);
  timer.unref();
  heardUntil = Number.POSITIVE_INFINITY;
  announceHeard(true);
  return {
    stop: async () => {
      clearInterval(timer);
      heardUntil = 0;
      connection.close();
    },
  };
}

/** `7,12` → [7, 12]; `*`, or anything else, is every owner. */
function ownersOf(list: string): ChangedOwners {
  if (!/^\d+(,\d+)*$/.test(list)) return 'all';
  return list.split(',').map(Number);
}

function listenPostgres(databaseUrl: string, log: SignalsLog): Promise<{ stop: () => Promise<void> }> {
  const { connectionString, schema } = postgresConnection(databaseUrl);
  // The triggers send the schema they were created in, which the migration runner sets as it does here.
  const schemaName = schema ?? 'public';
  let client: pg.Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let reconnect: NodeJS.Timeout | undefined;
  let pauseMs = RECONNECT_FIRST_MS;
  let stopped = false;
  /** The AccessVersion as last read while heard; undefined once a change was heard (the next read must not match it). */
  let knownAccess: string | undefined;
  let lostOnce = false;
  let firstAttempt: (() => void) | undefined;
  const firstAttemptEnded = new Promise<void>((resolve) => (firstAttempt = resolve));

  function lose(current: pg.Client, reason: unknown): void {
    if (client !== current) return;
    client = undefined;
    clearInterval(heartbeat);
    heardUntil = 0;
    if (announcedHeard) {
      lostOnce = true;
      log.warn({ err: reason }, 'stopped hearing the database (PostgreSQL LISTEN): the token cache, live feed and list versions ask the database until it is back');
    }
    announceHeard(false);
    current.end().catch(() => {});
    if (!stopped) {
      // connect() settles every failure itself (lose), so its promise is not awaited.
      reconnect = setTimeout(() => void connect(), pauseMs);
      reconnect.unref();
      pauseMs = Math.min(pauseMs * 2, RECONNECT_MAX_MS);
    }
  }

  async function connect(): Promise<void> {
    const current = new pg.Client({ connectionString, application_name: 'plant-store signals', connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    client = current;
    current.on('error', (error) => lose(current, error));
    current.on('end', () => lose(current, new Error('the connection ended')));
    current.on('notification', ({ channel, payload = '' }) => {
      if (client !== current) return;
      // `<schema>` for access, `<schema> <owner>,<owner>…` (or `<schema> *`) for plants.
      const space = payload.indexOf(' ');
      if ((space < 0 ? payload : payload.slice(0, space)) !== schemaName) return;
      if (channel === ACCESS_CHANNEL) {
        knownAccess = undefined;
        emitAccess();
      } else if (channel === PLANTS_CHANNEL) {
        emitPlants(ownersOf(space < 0 ? '*' : payload.slice(space + 1)));
      }
    });
    try {
      await current.connect();
      // One statement at a time on this connection, always: pg deprecates a query sent while one runs.
      await current.query(`LISTEN ${ACCESS_CHANNEL}`);
      await current.query(`LISTEN ${PLANTS_CHANNEL}`);
      const sentAt = Date.now();
      // Listening already: a change committed from here on is heard; the read says whether one came before.
      const { rows } = await current.query<{ version: string }>(`SELECT CAST("version" AS TEXT) AS version FROM ${pg.escapeIdentifier(schemaName)}."AccessVersion" WHERE "id" = 1`);
      if (client !== current) return;
      heardUntil = sentAt + HEARD_FOR_MS;
      pauseMs = RECONNECT_FIRST_MS;
      if (lostOnce) log.info({}, 'hearing the database again (PostgreSQL LISTEN)');
      const version = rows[0]?.version;
      if (version !== knownAccess) {
        knownAccess = version;
        emitAccess();
      }
      announceHeard(true);
      startHeartbeat(current);
    } catch (error) {
      lose(current, error);
    } finally {
      firstAttempt?.();
      firstAttempt = undefined;
    }
  }

  function startHeartbeat(current: pg.Client): void {
    let sentAt: number | undefined;
    heartbeat = setInterval(() => {
      if (sentAt !== undefined) {
        if (Date.now() - sentAt > HEARD_FOR_MS - HEARTBEAT_MS) lose(current, new Error(`no answer to a heartbeat in ${HEARD_FOR_MS - HEARTBEAT_MS} ms`));
        return;
      }
      const sent = Date.now();
      sentAt = sent;
      current.query('SELECT 1').then(
        () => {
          sentAt = undefined;
          if (client === current) heardUntil = sent + HEARD_FOR_MS;
        },
        (error: unknown) => lose(current, error),
      );
    }, HEARTBEAT_MS);
    heartbeat.unref();
  }

  void connect();
  return firstAttemptEnded.then(() => ({
    stop: async () => {
      stopped = true;
      clearTimeout(reconnect);
      clearInterval(heartbeat);
      heardUntil = 0;
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  }));
}
