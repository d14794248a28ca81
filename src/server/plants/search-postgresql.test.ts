import { describe, expect, it } from 'vitest';

import { likeTrigramCount } from './search-postgresql';

/**
 * pg_trgm's trigrams of `LIKE '%q%'` (generate_wildcard_trgm in its trgm_op.c): each run of word characters,
 * two spaces before it unless a wildcard precedes it, one after it unless a wildcard follows. A query with none
 * is answered from the short substrings' index instead (e2e/api/search.test.ts holds the answers to "contains").
 */
describe("pg_trgm's trigrams of a LIKE '%q%'", () => {
  it.each([
    ['~~~', 0],
    ['a!!', 0],
    ['0% ', 0],
    ['abc', 1],
    ['a!b', 1],
    ['0% c', 1],
    ['orchid ivy', 8],
    ['фикус', 3],
  ])('%j gives %i', (query, count) => {
    expect(likeTrigramCount(query)).toBe(count);
  });
});
