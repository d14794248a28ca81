/**
 * Waits for a condition the server reaches on its own time (a stream's event, a cleanup's end, a metric), checking
 * it every `everyMs`: a bound against a hang, not an expectation of speed, unless a test says so with `ms`.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000, everyMs = 10): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
