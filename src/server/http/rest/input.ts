import type { Problem } from '@/server/problems';

import type { RestRoute } from './routing';

/**
 * A REST request as its procedure's input, as the document describes it: a GET or DELETE takes the operation's
 * declared query parameters (text, as sent: one value as a string, a repeated one as a list, which the
 * schema refuses) and the path values; a write takes the JSON body, integers exact (bigint), and the path
 * values. Undeclared query parameters are left out (so `constructor` or `__proto__` never become keys), and
 * path values are percent-decoded. The schemas read decimal text where an integer is declared
 * (`fromDecimalText`); nothing is coerced, so a body's `"7"` is refused where an integer is required.
 */
export function restInput(route: RestRoute, searchParams: URLSearchParams, body: Record<string, unknown> | undefined, pathValues: Record<string, string>): unknown {
  if (!route.takesInput) return undefined;
  if (body !== undefined) return { ...body, ...pathValues };
  const input: Record<string, unknown> = {};
  for (const name of route.queryParameters) {
    const values = searchParams.getAll(name);
    if (values.length > 0) input[name] = values.length === 1 ? values[0] : values;
  }
  return Object.assign(input, pathValues);
}

/**
 * Validation issues name a field; where the field came from decides the error value (a path value is 40008,
 * a query value 40007, a body field 40002–40005). The shared translation knows bodies only, so path and
 * query fields are re-sorted here, where that is known.
 */
export function placeProblem(problem: Problem, route: RestRoute): Problem {
  const fromInput = ['missingField', 'wrongType', 'invalidValue', 'unknownField'].includes(problem.kind);
  if (!fromInput || !problem.field) return problem;
  if (route.pathParameters.includes(problem.field)) return { ...problem, kind: 'invalidPathParameter' };
  // Without a body, every other field came from the query.
  if (route.method === 'GET' || route.method === 'DELETE') return { ...problem, kind: 'invalidQueryParameter' };
  return problem;
}
