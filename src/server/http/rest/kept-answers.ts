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
 * Only answers made under a version the process knows at once are kept with their body (SQLite's watch,
 * plants/versions.ts): the request that reads it again learns its ETag without a query. The chain keeps a body
 * only for an ETag asked for a second time (the first request leaves its Link, as before), so a query asked
 * once, as most are, costs no more than it did; and only when the version read after the procedure is still the
 * one read before, so no commit fell between the ETag and the rows.
 *
 * Bounded twice, apart, the least recently answered forgotten first in both: the answers' Links and charges by
 * count (a Link is ~200 bytes; a client sending many distinct queries only pushes old ones out, and a forgotten
 * one costs running the procedure once more), and the bodies by their size. Large pages push out bodies only,
 * never the Links other clients' 304s are answered with.
 */

/** How many answers' Links and charges a process remembers. */
const KEPT_ANSWERS = 10_000;
/** How many bytes of bodies at most, counted as V8 may hold them: two bytes a character (2 M characters). */
const KEPT_BODY_BYTES = 4 * 1024 * 1024;
/** A body larger than this is not kept (128 K characters): a few long pages would push every short one out. */
const KEPT_BODY_MAX_BYTES = KEPT_BODY_BYTES / 16;

export type KeptAnswer = {
  /** The `Link` header, or '' for none. */
  link: string;
  /** The 200's JSON, while it is kept. */
  body?: string;
  /** What the procedure charged beyond the door's unit (`ctx.charge`): a kept body is charged the same. */
  units: number;
};

const sizeOf = (body: string) => body.length * 2;

export function keptAnswers(limits = { answers: KEPT_ANSWERS, bodyBytes: KEPT_BODY_BYTES, bodyMaxBytes: KEPT_BODY_MAX_BYTES }) {
  const answers = new Map<string, { link: string; units: number }>();
  // In the order they were last answered: a Map iterates in insertion order, and a hit inserts again.
  const bodies = new Map<string, string>();
  let bodyBytes = 0;

  function dropBody(key: string): void {
    const body = bodies.get(key);
    if (body === undefined) return;
    bodyBytes -= sizeOf(body);
    bodies.delete(key);
  }

  return {
    get(pathname: string, etag: string): KeptAnswer | undefined {
      const key = `${pathname} ${etag}`;
      const answer = answers.get(key);
      if (answer === undefined) return undefined;
      // Answered again: the newest of both orders, so a list polled often outlives the ones asked once.
      answers.delete(key);
      answers.set(key, answer);
      const body = bodies.get(key);
      if (body === undefined) return answer;
      bodies.delete(key);
      bodies.set(key, body);
      return { ...answer, body };
    },
    set(pathname: string, etag: string, { link, units, body }: KeptAnswer): void {
      const key = `${pathname} ${etag}`;
      answers.delete(key);
      answers.set(key, { link, units });
      dropBody(key);
      if (body !== undefined && sizeOf(body) <= limits.bodyMaxBytes) {
        bodies.set(key, body);
        bodyBytes += sizeOf(body);
      }
      while (bodyBytes > limits.bodyBytes) dropBody(bodies.keys().next().value!);
      while (answers.size > limits.answers) {
        const oldest = answers.keys().next().value!;
        answers.delete(oldest);
        dropBody(oldest);
      }
    },
    /** For tests: how many answers and bodies are kept, and the bodies' bytes. */
    size: () => ({ answers: answers.size, bodies: bodies.size, bodyBytes }),
  };
}
