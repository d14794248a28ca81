import { TRPCClientError } from '@trpc/client';

/** What the page shows of a failed request: the server's sentence, and the input field it is about. */
export type Problem = {
  message: string;
  /** The input field to show the message next to (`error.data.field`), when the server names one. */
  field: string | null;
  /** The stable error value of the contract's table (`error.data.error`). */
  value: number | null;
  status: number | null;
};

const NETWORK_MESSAGE = 'the server could not be reached; check the connection and try again';

export function problemOf(error: unknown): Problem {
  if (error instanceof TRPCClientError) {
    const data = error.data as { field?: unknown; error?: unknown; httpStatus?: unknown } | undefined;
    if (!data) return { message: NETWORK_MESSAGE, field: null, value: null, status: null };
    return {
      message: error.message,
      field: typeof data.field === 'string' ? data.field : null,
      value: typeof data.error === 'number' ? data.error : null,
      status: typeof data.httpStatus === 'number' ? data.httpStatus : null,
    };
  }
  return { message: NETWORK_MESSAGE, field: null, value: null, status: null };
}

/** The router's messages are lower-case clauses ("name must not be empty"); a page shows them as sentences. */
export function asSentence(message: string): string {
  const text = message.trim();
  if (!text) return text;
  const capitalised = text[0]!.toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `call`; when the server answers 429 (the token's bucket is short: a bulk change of many calls) it waits the
 * seconds the message names ("… in N s") and calls again, up to `attempts` times.
 */
export async function waitingOutRateLimit<T>(call: () => Promise<T>, attempts = 30): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const problem = problemOf(error);
      if (problem.status !== 429 || attempt >= attempts) throw error;
      await sleep(1000 * Number(/in (\d+) s/.exec(problem.message)?.[1] ?? 1));
    }
  }
}
