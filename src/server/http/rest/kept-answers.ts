/**
 * The conditional 200s this process answered, by path and ETag: their `Link` header for the 304s, and their
 * body for a request that asks again without `If-None-Match`.
 *
 * An ETag is a strong validator (conditional.ts): it names the caller's version of the data and the input, so
 * the bytes it went with cannot change while it holds, and any request whose ETag comes out the same would be
 * answered those bytes again. Most clients never send `If-None-Match` (generated clients do not), so a client
 * polling an unchanged list would otherwise run the list's query every time for the same answer; kept, the
 * answer costs what a 304 costs plus its bytes (docs/decisions/0013-kept-list-answers.md).
 *
 * Only answers made under a version the process knows at once are kept with their body (SQLite's watch, and on
 * PostgreSQL the versions kept while every commit is heard: plants/versions.ts): the request that reads it again
 * learns its ETag without a query. The chain keeps a body only for an ETag asked for a second time (the first
 * request leaves its Link, as before), so a query asked once, as most are, costs no more than it did; and only
 * when the version read after the procedure is still the one read before, so no commit fell between the ETag and
 * the rows.
 *
 * Bounded twice, apart: the answers' Links and charges by count (a Link is ~200 bytes; a client sending many
 * distinct queries only pushes old ones out, and a forgotten one costs running the procedure once more), and the
 * bodies by their size. Large pages push out bodies only, never the Links other clients' 304s are answered with.
 *
 * Each is kept in two generations instead of one ordered map: entries go into the young one, a hit in the old one
 * is copied into the young one, and when the young one is full it becomes the old one and the old one is dropped
 * whole. So what was answered lately is kept, between one and two generations' worth, and nothing is ever deleted
 * one at a time: a V8 Map of 10,000 entries that deletes its oldest key for each new one, or deletes and sets a
 * key to move it last, costs 7–25 µs per call (its deleted slots pile up at the front until it rebuilds itself;
 * measured in-process, 2026-11-27), where two generations cost ~0.25 µs.
 */

/** How many answers' Links and charges a generation holds: the last 5,000 to 10,000 answers are remembered. */
const ANSWERS_PER_GENERATION = 5_000;
/** How many bytes of bodies a generation holds, counted as V8 may hold them: two bytes a character. */
const BODY_BYTES_PER_GENERATION = 2 * 1024 * 1024;
/** A body larger than this is not kept (131,072 characters): a few long pages would push every short one out. */
const KEPT_BODY_MAX_BYTES = (2 * BODY_BYTES_PER_GENERATION) / 16;

export type KeptAnswer = {
  /** The `Link` header, or '' for none. */
  link: string;
  /** The 200's JSON, while it is kept. */
  body?: string;
  /** What the procedure charged beyond the door's unit (`ctx.charge`): a kept body is charged the same. */
  units: number;
};

/** Values by key in two generations, the young one turned old once `full` says so. */
function generations<T>(full: (young: Map<string, T>, weight: number) => boolean, weigh: (value: T) => number) {
  let young = new Map<string, T>();
  let old = new Map<string, T>();
  let youngWeight = 0;
  let oldWeight = 0;
  function set(key: string, value: T): void {
    // Two requests of one ETag may both run the procedure and keep its answer: the second replaces the first.
    const replaced = young.get(key);
    if (replaced !== undefined) youngWeight -= weigh(replaced);
    young.set(key, value);
    youngWeight += weigh(value);
    if (full(young, youngWeight)) {
      old = young;
      oldWeight = youngWeight;
      young = new Map();
      youngWeight = 0;
    }
  }
  return {
    get(key: string): T | undefined {
      const found = young.get(key);
      if (found !== undefined) return found;
      const older = old.get(key);
      if (older !== undefined) set(key, older);
      return older;
    },
    set,
    size: () => ({ entries: young.size + old.size, weight: youngWeight + oldWeight }),
  };
}

const sizeOf = (body: string) => body.length * 2;

export function keptAnswers(
  limits = { answersPerGeneration: ANSWERS_PER_GENERATION, bodyBytesPerGeneration: BODY_BYTES_PER_GENERATION, bodyMaxBytes: KEPT_BODY_MAX_BYTES },
) {
  const answers = generations<{ link: string; units: number }>(
    (young) => young.size >= limits.answersPerGeneration,
    () => 0,
  );
  const bodies = generations<string>((_young, bytes) => bytes >= limits.bodyBytesPerGeneration, sizeOf);

  return {
    get(pathname: string, etag: string): KeptAnswer | undefined {
      const key = `${pathname} ${etag}`;
      const answer = answers.get(key);
      if (answer === undefined) return undefined;
      const body = bodies.get(key);
      return body === undefined ? answer : { ...answer, body };
    },
    set(pathname: string, etag: string, { link, units, body }: KeptAnswer): void {
      const key = `${pathname} ${etag}`;
      answers.set(key, { link, units });
      if (body !== undefined && sizeOf(body) <= limits.bodyMaxBytes) bodies.set(key, body);
    },
    /** For tests: entries and bytes held (a key in both generations counts twice). */
    size: () => ({ answers: answers.size().entries, bodies: bodies.size().entries, bodyBytes: bodies.size().weight }),
  };
}
