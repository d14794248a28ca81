import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { anchorsOf, checkRepository, headingAnchor } from './pointers';

const root = mkdtempSync(path.join(tmpdir(), 'pointers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A small repository: its files, written under `root`, and the list git would give. */
function repository(files: Record<string, string>): string[] {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return Object.keys(files);
}

const files = repository({
  'src/server/db/client.ts': [
    '// The schemas are held equal by src/tooling/schema.test.ts; the engines in db/engines.ts.',
    "const fixture = 'src/not/there.ts'; // a string is code, not a pointer",
    'const slashes = /^\\/\\/x\\.ts$/; // a regular expression with two slashes is no comment',
    '/* See ../../../test-support/server-cpu.ts and ../support/server-cpu.ts, and token-cache.ts. */',
    '/** Marked in the doc as ```ts file=reader-file.ts; the old layout was 130f597:src/cli/start.ts. */',
    '// Written by the build: dist/server.mjs, .bench-build/server.mjs; Next.js and Node.js are no files; read/write.',
    'export const uses = { fixture, slashes }; // .meta(…), ...rest and .wasm begin no path',
  ].join('\n'),
  'src/server/db/engines.ts': '// db/client.ts, rest/chain.ts and docs/guide.md, "Second part".\n',
  'src/tooling/schema.test.ts': '',
  'src/server/http/rest/chain.ts': '',
  'e2e/api/plants.test.ts': '',
  'test-support/server-cpu.ts': '',
  'docs/guide.md': [
    '# Guide',
    '## Second part: `the` *words*',
    '## Second part: `the` *words*',
    '<a id="kept-anchor"></a>',
    'See [the client](../src/server/db/client.ts), [a gone file](../src/server/gone.ts), [here](#guide),',
    '[the part](#second-part-the-words), [its twin](#second-part-the-words-1), [nowhere](#no-such-part),',
    '[other doc](other.md#other-heading), [other doc, wrong](other.md#wrong), [kept](#kept-anchor),',
    '[the web](https://example.com/x.md#y).',
    'Paths in prose: src/server/db/engines.ts, src/server/db/missing.ts, `db/client.ts`, `db/nope.ts`,',
    'the folders src/server/db/ and e2e/gone, application/json, a reader file plant-store.ts.',
    'Quoted: docs/other.md, "Other heading"; docs/other.md, "A section since deleted"; [other](other.md), "Other',
    'heading", the quote across two lines.',
    '```sh',
    "import { x } from './reader-project-file.ts'",
    'npx tsx src/tooling/schema.test.ts src/tooling/gone.ts',
    '```',
  ].join('\n'),
  'docs/other.md': '# Other heading\n',
  'prisma/migrations/1_init/migration.sql': '-- docs/performance.md, "A section long gone" (a migration never changes)\n',
});

describe('the pointer check', () => {
  const broken = checkRepository(root, files).map(({ file, line, pointer }) => `${file}:${line} ${pointer}`);

  it('finds every pointer that leads nowhere, and nothing else', () => {
    expect(broken).toEqual([
      'src/server/db/client.ts:4 ../support/server-cpu.ts',
      'src/server/db/client.ts:4 token-cache.ts',
      'docs/guide.md:5 ../src/server/gone.ts',
      'docs/guide.md:6 #no-such-part',
      'docs/guide.md:7 other.md#wrong',
      'docs/guide.md:9 src/server/db/missing.ts',
      'docs/guide.md:9 db/nope.ts',
      'docs/guide.md:10 e2e/gone',
      'docs/guide.md:11 docs/other.md, "A section since deleted"',
      'docs/guide.md:15 src/tooling/gone.ts',
    ]);
  });

  it('a pointer fixed is no longer reported', () => {
    writeFileSync(path.join(root, 'src/server/db/token-cache.ts'), '');
    const after = checkRepository(root, [...files, 'src/server/db/token-cache.ts']);
    expect(after.map(({ pointer }) => pointer)).not.toContain('token-cache.ts');
    expect(after).toHaveLength(broken.length - 1);
  });
});

describe("GitHub's heading anchors", () => {
  it.each([
    ['Generated clients: ids stay exact', 'generated-clients-ids-stay-exact'],
    ['Decisions the contract left open', 'decisions-the-contract-left-open'],
    ['`If-None-Match` → 304, and `ETag`s', 'if-none-match--304-and-etags'],
    ['Prisma Studio', 'prisma-studio'],
    ['What [the link](x.md) says — in 2 words', 'what-the-link-says--in-2-words'],
    ['snake_case stays', 'snake_case-stays'],
  ])('%s → #%s', (heading, anchor) => {
    expect(headingAnchor(heading)).toBe(anchor);
  });

  it('numbers a repeated heading and ignores code blocks', () => {
    expect([...anchorsOf('# A\n## A\n```\n# B\n```\n## A\n')]).toEqual(['a', 'a-1', 'a-2']);
  });
});
