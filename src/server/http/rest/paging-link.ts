/**
 * The `Link: <…>; rel="next"` header of a list that has more pages (RFC 8288). It never echoes a Host
 * header a client chose: it starts from PUBLIC_URL when that is set (scheme included, so `https://`
 * behind a TLS proxy), and is otherwise a relative reference, which RFC 8288 resolves against the
 * request's own URL.
 */
export function nextPageLink(pathname: string, query: Record<string, string>, publicUrl: string | undefined): string {
  return `<${publicUrl ?? ''}${pathname}?${new URLSearchParams(query).toString()}>; rel="next"`;
}
