/**
 * What one request, one call or one user may cost the server, in one place: the front, the doors, the
 * procedures, the error catalogue and the OpenAPI document read these, so a limit a client meets and the
 * sentence that describes it never disagree. Browser-safe (the error catalogue is).
 */

/** A byte count as messages, the error catalogue and test names write it: `64 KiB`. */
export const kib = (bytes: number): string => `${bytes / 1024} KiB`;

/** Both doors: a request body larger than this is refused (413) without reading the rest. */
export const BODY_LIMIT_BYTES = 64 * 1024;
/** A body that sends nothing for this long is given up (408), so slow clients cannot hold the server. */
export const BODY_IDLE_TIMEOUT_MS = 10_000;
/** A body that trickles (a byte every few seconds) is given up once this has passed since its first byte was awaited. */
export const BODY_TOTAL_TIMEOUT_MS = 30_000;
/** A whole request (headers and body) still unfinished after this long is answered 408 by Node and closed. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** Request headers larger than this are refused (431) by Node's parser: its default, set explicitly so it is named once. */
export const HEADERS_MAX_BYTES = 16 * 1024;

/**
 * Both doors: how deeply arrays and objects may nest in a JSON body or a tRPC input. Every reader behind the
 * doors recurses over nesting (lossless-json, JSON.parse, superjson's walker, which copies the path at each
 * level and so costs the square of the depth, the canonical form of an Idempotency-Key's body, zod), so the
 * text is scanned for it first. The deepest legitimate input is a tRPC batch call's superjson annotations,
 * five levels; 32 leaves room for any future input and keeps every walk short.
 */
export const JSON_MAX_DEPTH = 32;

/** The REST list's `If-None-Match`: an ETag is under 100 characters; a longer header is refused (400), not compared. */
export const IF_NONE_MATCH_MAX_LENGTH = 8 * 1024;

/** Calls per tRPC batch: the admin page sends a few at a time; more only multiplies one request's cost. */
export const BATCH_MAX_CALLS = 10;

/**
 * A validation message names at most this many unknown fields, then their count: a body of 64 KiB of field
 * names is not echoed back (nor kept under an Idempotency-Key).
 */
export const UNKNOWN_FIELDS_NAMED = 3;
/** A field name quoted in a message is cut to this many characters. */
export const QUOTED_NAME_MAX_LENGTH = 64;

/**
 * Idempotency keys one user keeps at once (each at most ~1.6 KB: the key, a fingerprint and a create's answer).
 * A new key beyond them evicts that user's oldest answered key (docs/api.md, "Safe retries").
 */
export const IDEMPOTENCY_KEYS_PER_USER = 10_000;
/** The largest answer an Idempotency-Key keeps; a larger one is not kept (the retry runs again). */
export const IDEMPOTENCY_ANSWER_MAX_BYTES = 4 * 1024;

/*
 * What a call is charged against its token's rate-limit bucket (docs/api.md, "Rate limits: a call is charged what
 * it does"), in units of about a millisecond of the server's work: one per call, and beyond that, once the
 * input is read:
 */
/**
 * A request body: one unit per this many bytes beyond the first, charged once the body is read and before
 * anything parses it (a 64 KiB body costs 8). Reading, parsing and checking 64 KiB took 8–20 ms of CPU.
 */
export const BODY_BYTES_PER_UNIT = 8 * 1024;
/** The units a body of `bytes` costs beyond its call's own unit. */
export const bodyUnits = (bytes: number): number => Math.max(0, Math.ceil(bytes / BODY_BYTES_PER_UNIT) - 1);
/**
 * A bulk change of the admin page (delete or re-tag a selection, up to BULK_MAX plants a call): one unit per
 * this many plants. One statement changes them all; 100 deletes took 31–40 ms with their triggers.
 */
export const BULK_ROWS_PER_UNIT = 2;
/** A list: one unit per this many rows it may return (limit=1000 costs 10; each row is read, checked and written). */
export const ROWS_PER_UNIT = 100;
/** The admin page's table page: its rows and the two counts that place it ("26–50 of 186"), which scan the caller's plants. */
export const TABLE_PAGE_COST = 5;
/**
 * Placing a page further than COUNT_CAP from both ends of a view with a kept total: one unit per this many
 * index entries counted (plants/counts.ts, middleCountRows). A range count on the index that serves the sort.
 */
export const COUNTED_ROWS_PER_UNIT = 5_000;
/** More for a name search (`q`): it reads the folded name of every plant the caller may see, where other reads walk an index. */
export const SEARCH_COST = 10;
/** What a call with this name search costs beyond its rows: every call that reads by `q` (a list, a table page, a bulk change selecting by it). */
export const searchCost = (q: string | undefined): number => (q === undefined ? 0 : SEARCH_COST);

/**
 * The tag filter's suggestions (plants.tags) read the database's counts per owner and tag, most used first: at most
 * this many of them, so a prefix that only rarer tags match is offered what it matches among the most used ones.
 */
export const TAG_SUGGESTION_READ_MAX = 5_000;
/** A suggestion is charged one unit per this many counts it may read (or, for every owner, sum). */
export const TAG_COUNTS_PER_UNIT = 1_000;

/**
 * The webhook endpoints' counts (how many deliveries wait, how many failed) are counted in the delivery log's
 * index when they are read: one unit per this many rows a count may read. Deleting an endpoint deletes its log,
 * one unit per DELIVERY_ROWS_DELETED_PER_UNIT rows.
 */
export const DELIVERY_ROWS_COUNTED_PER_UNIT = 2_500;
export const DELIVERY_ROWS_DELETED_PER_UNIT = 300;

/** A webhook URL's length, as given and once percent-encoded (here, not in shared/webhooks.ts: the sending thread checks it and loads no zod). */
export const WEBHOOK_URL_MAX_LENGTH = 2000;
/** What is kept of a webhook receiver's answer; the rest is never read. */
export const WEBHOOK_RESPONSE_MAX_BYTES = 4 * 1024;

/**
 * Webhook senders: an attempt still unanswered after this long stops counting against
 * WEBHOOKS_CONCURRENCY, so endpoints that hang (each may take the whole 10 s timeout) cannot hold every
 * sender while a healthy endpoint's event waits. Receivers are asked to answer first and work later.
 */
export const WEBHOOK_SLOW_ATTEMPT_MS = 1_000;
/** Attempts past WEBHOOK_SLOW_ATTEMPT_MS one instance keeps open at once, beside WEBHOOKS_CONCURRENCY prompt ones: a bound on sockets. */
export const WEBHOOK_SLOW_ATTEMPTS_MAX = 64;
/** A 2xx within this time is a delivery (docs/contract.md, "1.1.0: webhooks"). DNS, connecting, TLS and the answer all count. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * The retry schedule's base (WEBHOOKS_RETRY_BASE_MS unless set), and its factors (webhooks/delivery/retry-schedule.ts): a wait
 * doubles from the base up to base × WEBHOOK_MAX_BACKOFF_FACTOR; a delivery is retried until base ×
 * WEBHOOK_RETRY_WINDOW_FACTOR (24 h at the default) has passed since its event; an endpoint failing for base ×
 * WEBHOOK_DISABLE_AFTER_FACTOR (5 days) without a success is disabled.
 */
export const WEBHOOK_RETRY_BASE_DEFAULT_MS = 30_000;
export const WEBHOOK_MAX_BACKOFF_FACTOR = 512;
export const WEBHOOK_RETRY_WINDOW_FACTOR = 2_880;
export const WEBHOOK_DISABLE_AFTER_FACTOR = 14_400;
/** A rotated-out signing secret still signs for this long, so receivers can switch without losing a delivery. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;
/** Delivered and failed deliveries are kept this long for the delivery log, then swept. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** A page of a webhook endpoint's delivery log. */
export const DELIVERY_PAGE_MAX = 100;
export const DELIVERY_PAGE_DEFAULT = 20;
/** Deliveries one call of the queue's bulk actions (retry all, discard) changes at most; the page goes on from `nextAfter`. */
export const DELIVERY_BATCH_MAX = 500;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 200;
/** The longest `lastError` an answer carries; the worker's own words are far shorter. */
export const LAST_ERROR_MAX_LENGTH = 500;

/**
 * The admin page's counts ("1–25 of 10,000+") are exact up to this, then "at least": counting is what grows
 * with the store (a page by key does not), so no count reads more than this + 1 matching index entries.
 */
export const COUNT_CAP = 10_000;
/**
 * A name search counts to 1,000: past that, each further match costs a row read and tested (or looked up
 * for the access rule), ten times what an index range of the tag or owner filters costs per row.
 */
export const SEARCH_COUNT_CAP = 1_000;

/**
 * A name search of many matches (the admin page's, in any order; a bulk change's and an export's batches) walks
 * that order's index and tests each name until its page is full: no index lists a substring's matches in name
 * (tag, owner, creation) order, and matches added last lie at the far end of id order. Not the REST list's,
 * whose pages stay full (plants/service.ts, listPlants).
 * Each walk reads at most this many rows of one segment of the order on SQLite (on PostgreSQL, below); a request runs up to 4 such walks (a read
 * of the page and a second read, whether more follows or the nearest page, each over up to 2 segments: the tag
 * sort's). A walk that stops there ends its request's read, which answers with what it found and where it
 * stopped, and the next request goes on from there (docs/admin-page.md, "At scale"). ~0.2 µs a row on
 * SQLite (the covering index, the name tested where it lies): a few milliseconds at any size of the store.
 */
export const SEARCH_WALK_BUDGET = 50_000;
/**
 * PostgreSQL's walks read at most this many rows each (SEARCH_WALK_BUDGET is SQLite's). A walk whose page comes
 * back short reads the walked index entries a second time there, to find the row where it stopped (no single
 * pass is cheaper on PostgreSQL: a row_number() over the walk, a shared CTE or a PL/pgSQL loop each cost more than
 * the two), and in tag, owner and creation order each walked row is read from the table. So its walk of "orchid"
 * by name costs what SQLite's 50,000 rows do (docs/performance.md, "Search at scale").
 */
export const POSTGRESQL_SEARCH_WALK_BUDGET = 30_000;
/** The rows one walk of a request reads on this engine. */
export const searchWalkBudget = (engine: 'sqlite' | 'postgresql'): number => ({ sqlite: SEARCH_WALK_BUDGET, postgresql: POSTGRESQL_SEARCH_WALK_BUDGET })[engine];

/** A live feed resumed with `lastEventId` is sent what it missed first (up to plants/live/feed.ts's REPLAY_MAX events): one unit per this many. */
export const REPLAYED_EVENTS_PER_UNIT = 25;

/**
 * Calls whose work does not grow with their input or the store but is more than one unit's: what each costs, in
 * units (their server CPU per call, e2e/api/router-costs.test.ts, on this 2-core machine at load 6–21, divided by
 * how much busier than quiet it was then: 1.5–2.5 ms to write a plant, 2.5–3.5 ms for a token, 2–3 ms for the
 * others, 3–5 ms to open a feed).
 */
export const FIXED_COSTS = {
  /** plants.create, update and delete: a row written with its triggers (the search index, the name's fold, the tag's count, the list's version, the feed's log, the webhooks' outbox) and a commit. */
  writePlant: 2,
  /** plants.changes: opening the live feed's stream (tRPC's SSE machinery, the feed's registration). */
  openLiveFeed: 5,
  /** tokens.create: a user written if new, a token's random bytes, hash and row. */
  issueToken: 5,
  /** tokens.revoke: the row, and the cached acceptance dropped. */
  revokeToken: 3,
  /** tokens.setRole: the user's role written, the last admin checked, the cached acceptances dropped. */
  setRole: 4,
  /** webhooks.create: the URL's check, a secret made and encrypted, the row. */
  createWebhook: 3,
  /** webhooks.rotateSecret: a secret made and encrypted. */
  rotateWebhookSecret: 3,
  /** webhooks.sendTest: an event written behind the endpoint's log. */
  sendWebhookTest: 3,
  /** plants.imports.create: an import's row, and the user's oldest let go past the ones kept. */
  startImport: 3,
  /** plants.imports.preview and stop: the import's last record read or its apply's claim ended, and its row written. */
  stepImport: 3,
  /** plants.imports.run: the import claimed (no other of the user's applying), its row written, the apply's first slice queued. */
  applyImport: 5,
  /** webhooks.retry: a delivery made due, and the sender woken. */
  retryWebhookDelivery: 3,
} as const;

/** A page of an import's rows: one unit per this many rows it may return (each with its cells and, when refused, why). */
export const IMPORT_ROWS_PER_UNIT = 25;
/** A page of the delivery log: one unit per this many deliveries it may return (each carries its payload and last answer). */
export const DELIVERY_ROWS_PER_UNIT = 25;
/** The token list: one unit per this many tokens it shows (each with its user; 5,000 took 67–98 ms). */
export const TOKENS_PER_UNIT = 25;

/**
 * An MCP request is charged this many units at its door, where REST and tRPC charge one: each message goes through
 * the official SDK's server and transport, a web Request and Response and its JSON-RPC checks, about as much work
 * again as a REST request's own (a ping cost 0.74 ms of CPU where a REST list of one plant cost 0.31 ms).
 */
export const MCP_REQUEST_UNITS = 2;

/** Live feeds (the admin page's stream of changes) open at once per token (a few tabs) and per process; past either, 429. */
export const MAX_STREAMS_PER_TOKEN = 4;
export const MAX_STREAMS = 1_000;

/*
 * CSV import (docs/api.md, "CSV import"; docs/decisions/0022-csv-import.md). A file arrives in parts, each a
 * request body within BODY_LIMIT_BYTES, so no request holds more of it; what one import may hold in all is
 * bounded here, and what is kept between parts is one unfinished record.
 */
/** The bytes of one import's file, all parts together (an admin's export of 100,000 plants is ~7 MB). */
export const IMPORT_MAX_BYTES = 8 * 1024 * 1024;
/** The rows of one import's file (lines with data; empty lines are not rows). */
export const IMPORT_MAX_ROWS = 100_000;
/**
 * The characters of one record of the file. A plant's longest record is ~1,500 (a name of 200 characters of
 * doubled quotes, a tag of 100, an owner and a time); a longer one is a quote never closed, and nothing after
 * it can be read.
 */
export const IMPORT_RECORD_MAX_LENGTH = 4_096;
/**
 * The rows of one part of an import's file. Each row is checked, its id looked up and the row kept, 14–28 µs a
 * row with its share of the part's statements: a part of 2,000 rows holds the server ~30 ms (bench/import-costs.ts),
 * within the 50 ms a request may take (test-support/server-cpu.ts).
 */
export const IMPORT_PART_MAX_ROWS = 2_000;
/** Imports one user keeps; starting one more lets go of their oldest that is not being applied. */
export const IMPORTS_KEPT_PER_USER = 5;
/** An import untouched this long is swept, its rows with it. */
export const IMPORT_KEPT_MS = 24 * 60 * 60 * 1000;
/**
 * A part of an import: one unit per this many rows it holds, beyond the body's own units, charged once the part
 * is read and before its rows are looked up and kept (each row is checked, its id looked up, the row kept): a
 * part of 1,000 rows of an export cost the server 25–28 ms, of 2,000 of the shortest rows 33–42 ms
 * (`npx tsx bench/import-costs.ts`, docs/api.md "Rate limits").
 */
export const IMPORT_PART_ROWS_PER_UNIT = 40;
/**
 * Applying an import: one unit per this many rows, as a bulk change, charged to the token that asked for the
 * apply slice by slice, the apply waiting for the units as an export does. Each row is read again, compared with
 * the plant as it is, and created or changed with the triggers every write of a plant runs: 0.44 ms a row for
 * new plants, slices included (bench/import-costs.ts).
 */
export const IMPORT_APPLY_ROWS_PER_UNIT = 2;

/** A plant's name and tag, in characters (shared/plants.ts checks them: both doors, the forms, the import). */
export const NAME_MAX_LENGTH = 200;
export const TAG_MAX_LENGTH = 100;
/** The REST list's `limit`: at most, and when none is given. */
export const PAGE_LIMIT_MAX = 1000;
export const PAGE_LIMIT_DEFAULT = 100;
/** A filter's text (`q`, and a tag suggestion's prefix), in characters. */
export const QUERY_MAX_LENGTH = 200;
/** Bulk changes of the admin page (tRPC only): at most this many plants per call, each answered on its own. */
export const BULK_MAX = 500;
/** The tag suggestions answered at most, most used first. */
export const TAG_SUGGESTIONS_MAX = 12;
