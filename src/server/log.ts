import pino from 'pino';

/**
 * Structured logs (one JSON object a line) on stdout. Nothing here ever sees a token: the edge logs
 * path, status, timing and user id, never headers or bodies; `redact` guards anything passed by mistake.
 */
export function createLogger(level: pino.LevelWithSilent) {
  return pino({
    level,
    base: { service: 'plant-store' },
    redact: { paths: ['authorization', 'token', '*.authorization', '*.token', 'headers'], censor: '[redacted]' },
  });
}

/**
 * The request log (http/guards/request-log.ts): one line per request, the most written lines by far. Its
 * entries are built from known fields only (never a header or a body), so it skips `logger`'s redaction,
 * which costs more than writing the line (~3.5 µs of a list's). Written at once like `logger`'s:
 * batching the lines (pino's asynchronous destination) cost more CPU in all than one write(2) each.
 */
export function createRequestLogger(level: pino.LevelWithSilent) {
  return pino({ level, base: { service: 'plant-store' } });
}

/** What the server's parts write to the log: pino's call shape, so tests can hand in a recorder instead. */
export type Logger = {
  info: (entry: Record<string, unknown>, message: string) => void;
  warn: (entry: Record<string, unknown>, message: string) => void;
  error: (entry: Record<string, unknown>, message: string) => void;
};
