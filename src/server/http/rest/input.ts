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
