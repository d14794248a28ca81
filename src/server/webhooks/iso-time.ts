/** A Unix-ms column as the API writes times (ISO 8601, UTC); null stays null. */
export const isoTime = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
