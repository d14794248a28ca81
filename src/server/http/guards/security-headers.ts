/**
 * Security headers, one place for every kind of answer: the API's JSON (nothing may render it as a page or
 * frame it), the admin page (a CSP whose only inline scripts are the build's own, by hash), and the API docs.
 */

const COMMON = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
} as const;

/** Every answer under /api: JSON that depends on the token, never cached, never a document. */
export const API_HEADERS: Record<string, string> = {
  ...COMMON,
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

const PERMISSIONS_POLICY = 'camera=(), microphone=(), geolocation=(), payment=(), usb=()';

function policy(directives: Record<string, string>): string {
  return Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

/**
 * The admin page: scripts only from this origin plus the inline scripts of the build, each allowed by its
 * SHA-256; no eval, no inline styles, nothing framed, nothing sent elsewhere. In development Next.js's
 * hot reload needs eval and inline scripts, so the policy loosens there only.
 */
export function pageHeaders(inlineScriptHashes: readonly string[], options: { dev?: boolean } = {}): Record<string, string> {
  const scripts = options.dev ? "'self' 'unsafe-inline' 'unsafe-eval'" : ["'self'", ...inlineScriptHashes.map((hash) => `'sha256-${hash}'`)].join(' ');
  return {
    ...COMMON,
    'Permissions-Policy': PERMISSIONS_POLICY,
    'Content-Security-Policy': policy({
      'default-src': "'self'",
      'script-src': scripts,
      'style-src': options.dev ? "'self' 'unsafe-inline'" : "'self'",
      'img-src': "'self' data: blob:",
      'font-src': "'self'",
      'connect-src': options.dev ? "'self' ws:" : "'self'",
      'object-src': "'none'",
      'base-uri': "'self'",
      'form-action': "'self'",
      'frame-ancestors': "'none'",
    }),
  };
}

/**
 * The API docs page (Swagger UI): the same headers and the same strict policy as the admin page, with no
 * inline script at all (its start script is a file). Swagger UI sets styles through the DOM (CSSOM), which
 * `style-src 'self'` allows; no inline <style> or style attribute is needed.
 */
export const DOCS_HEADERS: Record<string, string> = {
  ...pageHeaders([]),
  'Cache-Control': 'no-cache',
};
