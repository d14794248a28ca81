import pino from 'pino';

/**
 * Structured logs (one JSON object a line) on stdout. Nothing here ever sees a token: the edge logs
 * path, status, timing and user id, never headers or bodies; `redact` guards anything passed by mistake.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'plant-store' },
  redact: { paths: ['authorization', 'token', '*.authorization', '*.token', 'headers'], censor: '[redacted]' },
});
