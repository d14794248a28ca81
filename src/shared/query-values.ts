import { z } from 'zod';

/**
 * URL path and query values are text: accept decimal digits there, and the typed value from the tRPC
 * door. The declared input type says so, instead of the `unknown` a preprocess step would give callers.
 */
export const fromDecimalText = <T extends z.ZodType>(parse: (digits: string) => unknown, schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? parse(value) : value), schema) as unknown as z.ZodType<
    z.output<T>,
    z.input<T> | string
  >;

/**
 * The longest `Link: <…>; rel="next"` a list answers with: the request's path as the client wrote it
 * (within Node's 16 KiB of request headers), the next page's query (its filters are at most ~4.5 KiB once
 * percent-encoded) and PUBLIC_URL (at most 2,000 characters).
 */
export const NEXT_LINK_MAX_LENGTH = 32 * 1024;

/** The `Link` header of a list that has a next page, as the REST door writes it (http/rest/paging-link.ts). */
export const nextPageLinkHeader = (description: string) =>
  z
    .string()
    .max(NEXT_LINK_MAX_LENGTH)
    .regex(/^<.*>; rel="next"$/)
    .optional()
    .meta({ description });

/**
 * An optional page size from 1 to `max`. Its documentation sits on the inner schema: trpc-to-openapi
 * unwraps `.optional()` (and its metadata with it) before it describes a query parameter.
 */
export const pageLimit = (max: number, defaultValue: number, description: string) => {
  const message = `limit must be an integer from 1 to ${max}`;
  return fromDecimalText(Number, z.int({ error: message }).min(1, { error: message }).max(max, { error: message }))
    .meta({ description, override: { type: 'integer', format: 'int32', minimum: 1, maximum: max, default: defaultValue } })
    .optional();
};
