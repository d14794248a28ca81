/**
 * The conditional 200s this process answered, by path and ETag: their `Link` header for the 304s, and their
 * body for a request that asks again without `If-None-Match`.
 *
 * An ETag is a strong validator (conditional.ts): it names the caller's version of the data and the input, so
 * the bytes it went with cannot change while it holds, and any request whose ETag comes out the same would be
 * answered those bytes again. Most clients never send `If-None-Match` (generated clients do not), so a client
 * polling an unchanged list would otherwise run the list's query every time for the same answer; kept, the
 * answer costs what a 304 costs plus its bytes (docs/performance.md, "Round eight: kept answers").
 *
 * Only answers made under a version the process knows at once are kept with their body (SQLite's watch,
 * plants/versions.ts): the request that reads it again learns its ETag without a query. The chain keeps a body
 * only when the version read after the procedure is still the one read before, so no commit fell between the
 * ETag and the rows.
 *
 * Bounded twice: by entries (a Link is ~200 bytes) and by the bodies' size; the oldest is forgotten first, so a
 * client sending many distinct queries only pushes old entries out, and a forgotten one costs running the
 * procedure once more.
 */

/** How many answers a process remembers. */
const KEPT_ANSWERS = 10_000;
/** How many bytes of bodies at most: counted as V8 may hold them, two bytes a character. */
const KEPT_BODY_BYTES = 4 * 1024 * 1024;
/** A body larger than this is not kept: a few long pages would push every short one out. */
const KEPT_BODY_MAX_BYTES = KEPT_BODY_BYTES / 16;

export type KeptAnswer = {
  /** The `Link` header, or '' for none. */
  link: string;
  /** The 200's JSON, when it was kept. */
  body?: string;
  /** What the procedure charged beyond the door's unit (`ctx.charge`): a kept answer is charged the same. */
  units: number;
};

const sizeOf = (answer: KeptAnswer) => (answer.body === undefined ? 0 : answer.body.length * 2);

export function keptAnswers(limits = { answers: KEPT_ANSWERS, bodyBytes: KEPT_BODY_BYTES, bodyMaxBytes: KEPT_BODY_MAX_BYTES }) {
  const entries = new Map<string, KeptAnswer>();
  let bodyBytes = 0;

  function forget(key: string): void {
    const answer = entries.get(key);
    if (answer === undefined) return;
    bodyBytes -= sizeOf(answer);
    entries.delete(key);
  }

  return {
    get: (pathname: string, etag: string): KeptAnswer | undefined => entries.get(`${pathname} ${etag}`),
    set(pathname: string, etag: string, answer: KeptAnswer): void {
      const key = `${pathname} ${etag}`;
      forget(key);
      const kept = sizeOf(answer) > limits.bodyMaxBytes ? { link: answer.link, units: answer.units } : answer;
      entries.set(key, kept);
      bodyBytes += sizeOf(kept);
      while (entries.size > limits.answers || bodyBytes > limits.bodyBytes) forget(entries.keys().next().value!);
    },
    /** For tests: how many answers and body bytes are kept. */
    size: () => ({ answers: entries.size, bodyBytes }),
  };
}
