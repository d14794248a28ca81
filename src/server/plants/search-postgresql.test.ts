import { describe, expect, it } from 'vitest';

import { likeTrigramCount, rarestTrigrams, type TrigramStatistics, trigramStatisticsOf } from './search-postgresql';

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

/**
 * Which trigrams of a long query are asked of the index (the others are tested on the rows they leave), from
 * the statistics' frequencies; null asks for every trigram, as the whole query's LIKE does.
 */
describe('the rarest trigrams of a long query', () => {
  // As ANALYZE lists them for the bench's 10 M names: the words' trigrams in 1 name in 6, "500" in 1 in 200,
  // "000" not listed (rarer than the least listed, 0.46 %).
  const bench: TrigramStatistics = {
    frequencies: new Map([...['cal', 'ala', 'lat', 'ath', 'the', 'hea', 'fer', 'ern', 'orc', 'rch', 'chi', 'hid', 'ivy'].map((t) => [t, 0.16] as const), ['500', 0.005]]),
    leastListed: 0.0046,
    rows: 10_000_000,
  };

  it('asks for the rarest few, unlisted first, and leaves the common words to the test', () => {
    expect(rarestTrigrams('calathea fern 5000000', bench)).toEqual(['000', '500']);
    expect(rarestTrigrams('fern orchid 4711', bench)).toEqual(['471', '711']);
  });

  it('asks for every trigram when none is rare, when all of them would be asked, or without statistics', () => {
    // Only words of 1 name in 6: the rows they leave would cost more than the lists.
    expect(rarestTrigrams('calathea fern', bench)).toBeNull();
    // "500" and "000" are all of "5000000"'s trigrams: the whole query's LIKE asks the same.
    expect(rarestTrigrams('5000000', bench)).toBeNull();
    expect(rarestTrigrams('calathea fern 5000000', null)).toBeNull();
    // Trigrams of other characters are stored as hashes, which the statistics do not spell: never asked.
    expect(rarestTrigrams('фикус лирата', { ...bench, frequencies: new Map() })).toBeNull();
  });

  it('stops at three, and once the rows left are few', () => {
    const rare: TrigramStatistics = { frequencies: new Map([['abc', 0.01], ['bcd', 0.01], ['cde', 0.01], ['def', 0.01], ['efg', 0.01]]), leastListed: 0.01, rows: 1e9 };
    expect(rarestTrigrams('abcdefg', rare)).toEqual(['abc', 'bcd', 'cde']);
    // 10 M × 1 % × 1 % = 1,000 rows left after two: enough.
    expect(rarestTrigrams('abcdefg', { ...rare, rows: 10_000_000 })).toEqual(['abc', 'bcd']);
  });

  it('reads the statistics as PostgreSQL lists them: the frequencies, then the least, the greatest and the null fraction', () => {
    expect(trigramStatisticsOf({ trigrams: ['500', 'cal'], frequencies: [0.005, 0.16, 0.005, 0.16, 0], rows: 10 })).toEqual({
      frequencies: new Map([['500', 0.005], ['cal', 0.16]]),
      leastListed: 0.005,
      rows: 10,
    });
    expect(trigramStatisticsOf({ trigrams: null, frequencies: null, rows: 10 })).toBeNull();
  });
});
