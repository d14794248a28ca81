import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const serverDir = path.join(root, 'src/server');

/** Every module of src/server but the tests, as docs/architecture.md names it (relative to src/server). */
function serverModules(): string[] {
  return readdirSync(serverDir, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .sort();
}

/** The modules the map's "src/server, file by file" section names. */
function namedInTheMap(): string[] {
  const map = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const section = map.slice(map.indexOf('### src/server, file by file'), map.indexOf('\n### ', map.indexOf('### src/server, file by file') + 1));
  return [...section.matchAll(/`([^`\s*]+\.tsx?)`/g)].map((match) => match[1]!);
}

it('docs/architecture.md places every module of src/server, and names no module that is not there', () => {
  const modules = serverModules();
  const named = namedInTheMap();
  expect({ unplaced: modules.filter((file) => !named.includes(file)), absent: named.filter((file) => !modules.includes(file)) }).toEqual({
    unplaced: [],
    absent: [],
  });
});
