import 'server-only';

import type { Actor } from '@/server/auth/permissions';

/**
 * Accepted tokens, remembered for a few seconds so a busy client does not cost a database lookup per
 * request. The bound is the price: a token revoked, expired early or demoted by another process (the
 * token command, another instance) is still honoured here for at most this long. Changes made through
 * this process take effect at once (`forgetAcceptedTokens`), and those made elsewhere as soon as the database
 * signals them (held-access.ts: within a second; the lifetime bounds them only while those signals are not
 * heard). `AUTH_CACHE_TTL_MS=0` turns it off.
 */
const MAX_ENTRIES = 10_000;

export type AcceptedToken = { actor: Actor; tokenId: number; expiresAt: Date | null };
type Entry = AcceptedToken & { cachedAt: number };

// Off until the entry point hands down AUTH_CACHE_TTL_MS: a one-shot command (the token CLI) needs no cache.
const cache = { ttlMs: 0, entries: new Map<string, Entry>(), generation: 0 };
const forgottenListeners = new Set<() => void>();

/** Called once at start by the entry point, with the configured AUTH_CACHE_TTL_MS. */
export function configureTokenCache({ ttlMs }: { ttlMs: number }): void {
  cache.ttlMs = ttlMs;
  forgetAcceptedTokens();
}

/**
 * Taken before a lookup and handed back with its result: a lookup that began before a revoke in this
 * process may have read the token as valid, and must not put that back into the cache after the revoke.
 */
export function cacheGeneration(): number {
  return cache.generation;
}

/** The cached acceptance of a token hash, if it is recent and the token has not expired since. */
export function recallAcceptedToken(hash: string, now: Date): AcceptedToken | undefined {
  const entry = cache.entries.get(hash);
  if (entry === undefined) return undefined;
  const age = now.getTime() - entry.cachedAt;
  // A negative age is the clock stepping back: the entry's real age is unknown, so it is dropped.
  if (age < 0 || age >= cache.ttlMs || (entry.expiresAt !== null && entry.expiresAt <= now)) {
    cache.entries.delete(hash);
    return undefined;
  }
  return entry;
}

export function rememberAcceptedToken(hash: string, accepted: AcceptedToken, now: Date, lookedUpIn: number): void {
  if (cache.ttlMs === 0 || lookedUpIn !== cache.generation) return;
  // Oldest first out: a Map iterates in insertion order.
  if (cache.entries.size >= MAX_ENTRIES) cache.entries.delete(cache.entries.keys().next().value!);
  cache.entries.set(hash, { ...accepted, cachedAt: now.getTime() });
}

/** After a revoke or a role change, here or heard of: nobody keeps access through a stale entry. */
export function forgetAcceptedTokens(): void {
  cache.generation++;
  cache.entries.clear();
  for (const listener of forgottenListeners) listener();
}

/** Told each time the accepted tokens are forgotten: access may have changed (held-access.ts checks the open streams). */
export function onAcceptedTokensForgotten(listener: () => void): () => void {
  forgottenListeners.add(listener);
  return () => forgottenListeners.delete(listener);
}
