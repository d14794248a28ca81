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
