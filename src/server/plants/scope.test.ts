import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import type { Actor } from '@/server/auth/permissions';

import { failureOf, signIn } from '@test-support/actors';

import { inPlantScope } from './scope';

/**
 * One access scope (scope.ts): every query of plant rows takes its access rule from there. The scan below
 * finds each Prisma call on the plant model and each piece of SQL naming the Plant table in src/server, and wants
 * the scope in it: scope.ts's own functions, or conditions.ts's conditions() (which starts with plantScopeSql), or
 * bulk.ts's byIds() (which is conditions() and the ids), within the statement or the three lines above; or a
 * `// plant scope: <reason>` comment there saying why this one needs none. A new plant query that forgets the
 * scope fails here before any review; the second block checks that the scope holds through each procedure.
 */
// The server: the only code with a database (the UI and shared code reach plants through the API).
const SRC = path.resolve(import.meta.dirname, '..');
const PRISMA_CALL = /\b\w+\.plant\.\w+\s*\(/;
const SQL_TABLE = /"Plant"|\b(?:FROM|JOIN|UPDATE|INTO)\s+Plant\b/;
const SCOPED = /\b(?:plantScopeWhere|plantScopeSql|conditions|scopeConditions|byIds)\(|\/\/ plant scope: \S/;
const WINDOW_ABOVE = 3;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const isComment = (line: string) => /^\s*(?:\/\/|\/\*|\*)/.test(line);

/** The text of a call from its line on to its closing parenthesis (a Prisma call's `where` may span lines). */
function callText(lines: string[], start: number): string {
  let depth = 0;
  let text = '';
  for (let index = start; index < lines.length; index++) {
    const line = lines[index]!;
    text += `${line}\n`;
    for (const character of line) depth += character === '(' ? 1 : character === ')' ? -1 : 0;
    if (depth <= 0 && text.includes('(')) break;
  }
  return text;
}

/** Each plant query in `source` that neither goes through the scope nor says why it needs none. */
export function unscopedPlantQueries(source: string): number[] {
  const lines = source.split('\n');
  const unscoped: number[] = [];
  for (const [index, line] of lines.entries()) {
    if (isComment(line) || !(PRISMA_CALL.test(line) || SQL_TABLE.test(line))) continue;
    const around = `${lines.slice(Math.max(0, index - WINDOW_ABOVE), index).join('\n')}\n${callText(lines, index)}`;
    if (!SCOPED.test(around)) unscoped.push(index + 1);
  }
  return unscoped;
}

describe('the plant access scope', () => {
  it('is taken by every plant query in src/server (or the query says why it needs none)', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(30);
    const offenders = files.flatMap((file) => unscopedPlantQueries(readFileSync(file, 'utf8')).map((line) => `${path.relative(SRC, file)}:${line}`));
    expect(offenders).toEqual([]);
  });

  it('is decided in scope.ts alone: no other file asks for plants:any to choose rows', () => {
    // permissions.ts defines the permission; router.ts guards the admin-only owners procedure with it (no plant rows).
    const allowed = new Set(['auth/permissions.ts', 'plants/router.ts', 'plants/scope.ts']);
    const asking = sourceFiles(SRC)
      .filter((file) => readFileSync(file, 'utf8').includes("'plants:any'"))
      .map((file) => path.relative(SRC, file))
      .filter((file) => !allowed.has(file));
    expect(asking).toEqual([]);
  });

  it('catches a stray query (the scan itself can fail)', () => {
    expect(unscopedPlantQueries('const all = await db.plant.findMany();')).toEqual([1]);
    expect(unscopedPlantQueries('await tx.plant.count({\n  where: { tag: "x" },\n});')).toEqual([1]);
    expect(unscopedPlantQueries('const rows = await db.$queryRaw`SELECT id FROM "Plant" p WHERE p.tag = ${tag}`;')).toEqual([1]);
    expect(unscopedPlantQueries('await db.plant.findMany({ where: { id, ...plantScopeWhere(actor) } });')).toEqual([]);
    expect(unscopedPlantQueries('// plant scope: upkeep of every row\nawait db.plant.findMany();')).toEqual([]);
  });
});

describe("a member's calls never reach another owner's plant", () => {
  it('through every procedure that reads or changes plants', async () => {
    const alice = await signIn('scope-alice');
    const bob = await signIn('scope-bob');
    await alice.caller.plants.create({ id: 9_010n, name: 'Scope secret', tag: 'scope-hidden' });
    await bob.caller.plants.create({ id: 9_002n, name: 'Scope mine', tag: 'scope-own' });
    const bobs = (plants: { id: bigint }[]) => expect(plants.map((plant) => plant.id)).not.toContain(9_010n);

    bobs(await bob.caller.plants.list({ after: 9_000n }));
    bobs(await bob.caller.plants.list({ q: 'scope' }));
    bobs(await bob.caller.plants.list({ tag: 'scope-hidden' }));
    const page = await bob.caller.plants.page({ size: 10, q: 'scope' });
    bobs(page.rows);
    expect(page.total).toBe(1);
    expect((await bob.caller.plants.tags({ prefix: 'scope' })).map((tag) => tag.tag)).toEqual(['scope-own']);
    // One past the highest id Bob can see, not past Alice's.
    expect((await bob.caller.plants.suggestId()).id).toBe(9_003n);
    expect(await failureOf(bob.caller.plants.update({ id: 9_010n, name: 'taken over' }))).toMatchObject({ kind: 'plantNotFound' });
    expect(await failureOf(bob.caller.plants.delete({ id: 9_010n }))).toMatchObject({ kind: 'plantNotFound' });
    expect(await bob.caller.plants.retagMany({ selection: { kind: 'ids', ids: [9_010n] }, tag: 'stolen' })).toEqual({ done: [], gone: [9_010n], nextAfter: null, previous: [] });
    const { asOf } = page;
    const everything = { kind: 'matching' as const, filters: {}, asOf, except: [9_002n] };
    expect(await bob.caller.plants.deleteMany({ selection: everything })).toEqual({ done: [], gone: [], nextAfter: null });
    expect(await bob.caller.plants.deleteMany({ selection: { kind: 'ids', ids: [9_010n] }, keepForUndo: true })).toEqual({ done: [], gone: [9_010n], nextAfter: null });
    expect(await bob.caller.plants.restore({ ids: [9_010n] })).toEqual({ restored: [], taken: [], missing: [9_010n] });

    // Alice's plant went through all of that as it was.
    expect(await alice.caller.plants.list({ after: 9_000n })).toEqual([{ id: 9_010n, name: 'Scope secret', tag: 'scope-hidden' }]);
  });
});

describe('one row within the scope (inPlantScope: the live feed asks it of each change)', () => {
  const member = (userId: number): Actor => ({ userId, name: `member ${userId}`, role: 'member' });
  it("is a member's own plant, any plant for an admin, and nothing else", () => {
    expect(inPlantScope(member(7), 7)).toBe(true);
    expect(inPlantScope(member(7), 8)).toBe(false);
    expect(inPlantScope({ userId: 1, name: 'admin', role: 'admin' }, 8)).toBe(true);
  });
});
