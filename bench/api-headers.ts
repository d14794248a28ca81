/**
 * The app's headers on every /api answer (src/server/http/guards/security-headers.ts), in its order, as the
 * flat array node:http writes cheapest. The floor and the ceiling send them so they are measured sending
 * what the app sends; the contract check names any header the app adds.
 */
export const API_HEADERS = [
  'X-Content-Type-Options', 'nosniff',
  'Referrer-Policy', 'no-referrer',
  'X-Frame-Options', 'DENY',
  'Cross-Origin-Opener-Policy', 'same-origin',
  'Cross-Origin-Resource-Policy', 'same-origin',
  'Cache-Control', 'no-store',
  'Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
];

/** The list's: the same, but `Cache-Control: private, no-cache`, as the app's conditional list answers (docs/api.md, "Conditional lists"). */
export const API_LIST_HEADERS = API_HEADERS.map((value, index) => (index > 0 && API_HEADERS[index - 1] === 'Cache-Control' ? 'private, no-cache' : value));
