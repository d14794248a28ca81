import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { errorCatalog } from './errors';

const apiDoc = readFileSync(path.resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

/** The rows of docs/api.md's error table: the table that follows the heading "## Errors". */
function documentedErrorRows(): string[] {
  const section = apiDoc.slice(apiDoc.indexOf('\n## Errors\n'));
  const table = section.slice(section.indexOf('\n| error | status | meaning |\n'));
  return table
    .split('\n')
    .slice(3)
    .filter((line, index, lines) => line.startsWith('|') && lines.slice(0, index).every((before) => before.startsWith('|')));
}

describe('the error catalogue', () => {
  it('is the table in docs/api.md, row for row (values, statuses and meanings)', () => {
    const expected = Object.values(errorCatalog)
      .toSorted((a, b) => a.value - b.value)
      .map(({ value, status, meaning }) => `| ${value} | ${status} | ${meaning} |`);
    expect(documentedErrorRows(), `docs/api.md's "## Errors" table should read:\n${expected.join('\n')}`).toEqual(expected);
  });

  it('has one value per kind, each its status times 100 plus a running number', () => {
    const values = Object.values(errorCatalog).map((entry) => entry.value);
    expect(new Set(values).size).toBe(values.length);
    for (const { value, status } of Object.values(errorCatalog)) expect(Math.floor(value / 100)).toBe(status);
  });
});
