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

  it('forgets the least recently answered past so many, with its body', () => {
    const answers = keptAnswers({ answers: 3, bodyBytes: 1000, bodyMaxBytes: 1000 });
    for (const etag of ['1', '2', '3', '4']) answers.set('/p', etag, { link: '', body: 'xx', units: 0 });
    expect(answers.get('/p', '1')).toBeUndefined();
    expect(answers.size()).toEqual({ answers: 3, bodies: 3, bodyBytes: 12 });
    // Answered again, `2` is the newest: `5` pushes out `3`.
    expect(answers.get('/p', '2')?.body).toBe('xx');
    answers.set('/p', '5', { link: '', body: 'xx', units: 0 });
    expect(answers.get('/p', '3')).toBeUndefined();
    expect(answers.get('/p', '2')?.body).toBe('xx');
  });

  it('drops the least recently answered bodies past so many bytes, keeping every Link and charge', () => {
    const answers = keptAnswers({ answers: 100, bodyBytes: 100, bodyMaxBytes: 40 });
    answers.set('/p', 'poll', { link: '<poll>', units: 3 });
    // 20 characters count 40 bytes (two a character, as V8 may hold them): two fit in 100.
    const body = 'x'.repeat(20);
    for (const etag of ['a', 'b']) answers.set('/p', etag, { link: `<${etag}>`, body, units: 0 });
    // Answered again, `a` is the most recent: `c` pushes out b's body, not a's.
    expect(answers.get('/p', 'a')?.body).toBe(body);
    answers.set('/p', 'c', { link: '<c>', body, units: 0 });
    expect(answers.size()).toEqual({ answers: 4, bodies: 2, bodyBytes: 80 });
    expect(answers.get('/p', 'b')).toEqual({ link: '<b>', units: 0 });
    expect(answers.get('/p', 'a')?.body).toBe(body);
    expect(answers.get('/p', 'poll')).toEqual({ link: '<poll>', units: 3 });

    // Too large a body: its Link and charge are kept for the 304s, not its bytes.
    answers.set('/p', 'd', { link: '<d>', body: 'y'.repeat(21), units: 4 });
    expect(answers.get('/p', 'd')).toEqual({ link: '<d>', units: 4 });
    // Kept again under the same key: counted once, and nothing else pushed out.
    answers.set('/p', 'c', { link: '<c>', body, units: 0 });
    expect(answers.size()).toEqual({ answers: 5, bodies: 2, bodyBytes: 80 });
    expect(answers.get('/p', 'a')?.body).toBe(body);
  });
});
