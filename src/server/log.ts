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

/** What the server's parts write to the log: pino's call shape, so tests can hand in a recorder instead. */
export type Logger = {
  info: (entry: Record<string, unknown>, message: string) => void;
  warn: (entry: Record<string, unknown>, message: string) => void;
  error: (entry: Record<string, unknown>, message: string) => void;
};
