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

  it('forgets the oldest first, past so many answers or so many bytes of bodies, and keeps no body that is too large', () => {
    const answers = keptAnswers({ answers: 3, bodyBytes: 100, bodyMaxBytes: 40 });
    for (const etag of ['1', '2', '3', '4']) answers.set('/p', etag, { link: '', units: 0 });
    expect(answers.get('/p', '1')).toBeUndefined();
    expect(answers.size()).toEqual({ answers: 3, bodyBytes: 0 });

    // 20 characters count 40 bytes (two a character, as V8 may hold them): two fit in 100, a third pushes the oldest out.
    const body = 'x'.repeat(20);
    for (const etag of ['a', 'b', 'c']) answers.set('/p', etag, { link: '', body, units: 0 });
    expect(answers.size()).toEqual({ answers: 2, bodyBytes: 80 });
    expect(answers.get('/p', 'a')).toBeUndefined();
    expect(answers.get('/p', 'c')?.body).toBe(body);

    // Too large a body: its Link and charge are kept for the 304s, not its bytes.
    answers.set('/p', 'd', { link: '<x>', body: 'y'.repeat(21), units: 4 });
    expect(answers.get('/p', 'd')).toEqual({ link: '<x>', units: 4 });
    // Kept again under the same key: counted once.
    answers.set('/p', 'c', { link: '', body, units: 0 });
    expect(answers.size().bodyBytes).toBeLessThanOrEqual(80);
  });
});
