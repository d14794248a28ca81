import type { BatchToSend, SentAttempt } from './batch-in-order';

/** What the main thread and the sending thread (thread-entry.ts) post each other: plain data only. */
export type ToThread = { kind: 'send'; id: number; batch: BatchToSend } | { kind: 'cancel'; id: number } | { kind: 'finish' } | { kind: 'abort' };

export type FromThread =
  | { kind: 'sent'; id: number; sent: SentAttempt[] }
  /** An attempt of batch `id` has been unanswered for its slowMs. */
  | { kind: 'slow'; id: number }
  | { kind: 'failed'; id: number; error: string };
