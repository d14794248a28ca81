import { z } from 'zod';

/**
 * zod compiles object schemas with `new Function` when it may, and finds out by trying once, as the first
 * object schema is built. The page's CSP forbids eval, so in the browser that probe is a CSP violation.
 * Switched off here, before any schema module loads: import this module first. Results are the same.
 */
if (typeof window !== 'undefined') z.config({ jitless: true });
