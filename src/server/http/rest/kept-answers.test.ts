import { describe, expect, it } from 'vitest';

import { keptAnswers } from './kept-answers';

describe('kept answers', () => {
  it('gives back what was kept for a path and ETag, and nothing for another', () => {
    const answers = keptAnswers();
    answers.set('/api/plants', '"a"', { link: '</api/plants?after=2>; rel="next"', body: '[]', units: 9 });
    expect(answers.get('/api/plants', '"a"')).toEqual({ link: '</api/plants?after=2>; rel="next"', body: '[]', units: 9 });
    expect(answers.get('/api/plants', '"b"')).toBeUndefined();
    expect(answers.get('/api/plantz', '"a"')).toBeUndefined();
  });

  it('remembers the last one to two generations of answers, those answered lately among them', () => {
    const answers = keptAnswers({ answersPerGeneration: 3, bodyBytesPerGeneration: 1000, bodyMaxBytes: 1000 });
    for (const etag of ['1', '2', '3']) answers.set('/p', etag, { link: etag, units: 0 });
    // The first generation is full (1, 2, 3) and old now; 1 answered again is young again.
    expect(answers.get('/p', '1')?.link).toBe('1');
    for (const etag of ['4', '5']) answers.set('/p', etag, { link: etag, units: 0 });
    // The young generation (1, 4, 5) filled: the old one (2, 3) is gone.
    expect(answers.get('/p', '2')).toBeUndefined();
    expect(answers.get('/p', '3')).toBeUndefined();
    for (const etag of ['1', '4', '5']) expect(answers.get('/p', etag)?.link).toBe(etag);
    expect(answers.size().answers).toBeLessThanOrEqual(6);
  });

  it('keeps bodies within their bytes apart from the Links and charges, and no body that is too large', () => {
    const answers = keptAnswers({ answersPerGeneration: 100, bodyBytesPerGeneration: 80, bodyMaxBytes: 40 });
    answers.set('/p', 'poll', { link: '<poll>', units: 3 });
    // 20 characters count 40 bytes (two a character, as V8 may hold them): two fill a generation.
    const body = 'x'.repeat(20);
    for (const etag of ['a', 'b', 'c', 'd', 'e']) answers.set('/p', etag, { link: `<${etag}>`, body, units: 0 });
    // Generations (a, b), then (c, d), now young (e): a and b's bodies are gone, never their Links and charges.
    expect(answers.get('/p', 'a')).toEqual({ link: '<a>', units: 0 });
    expect(answers.get('/p', 'c')).toEqual({ link: '<c>', body, units: 0 });
    expect(answers.get('/p', 'poll')).toEqual({ link: '<poll>', units: 3 });
    expect(answers.size().bodyBytes).toBeLessThanOrEqual(2 * 80 + 40);

    // Kept again under the same key (two requests of one ETag), a body's bytes count once.
    const again = keptAnswers({ answersPerGeneration: 100, bodyBytesPerGeneration: 1000, bodyMaxBytes: 100 });
    for (let twice = 0; twice < 2; twice++) again.set('/p', 'a', { link: '', body, units: 0 });
    expect(again.size().bodyBytes).toBe(40);

    // Too large a body: its Link and charge are kept for the 304s, not its bytes.
    answers.set('/p', 'f', { link: '<f>', body: 'y'.repeat(21), units: 4 });
    expect(answers.get('/p', 'f')).toEqual({ link: '<f>', units: 4 });
  });

  it('costs well under a microsecond a call when full, where one ordered Map costs tens', () => {
    const answers = keptAnswers();
    for (let i = 0; i < 20_000; i++) answers.set('/api/plants', `"${i}"`, { link: '', units: 0, ...(i % 10 === 0 ? { body: '[]' } : {}) });
    // CPU time, the least of three rounds: a busy machine stretches the wall clock, not the work.
    const rounds = [0, 1, 2].map((round) => {
      const before = process.cpuUsage();
      for (let i = 0; i < 20_000; i++) {
        answers.set('/api/plants', `"new ${round} ${i}"`, { link: '', units: 0, body: '[]' });
        answers.get('/api/plants', '"19990"');
      }
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000;
    });
    // A bound against the pathology (7–25 µs a call measured), not a speed goal: 20,000 × 2 calls in 200 ms.
    expect(Math.min(...rounds)).toBeLessThan(200);
  });
});
