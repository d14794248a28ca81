import { z } from 'zod';

/**
 * An Idempotency-Key as the contract allows it: 1 to 255 printable ASCII characters (space included; HTTP
 * strips it at either end). The REST chain checks the header with it; the create procedure documents it.
 */
export const idempotencyKey = z.string().min(1).max(255).regex(/^[\x20-\x7e]+$/);
