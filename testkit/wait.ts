/**
 * Polling until a condition holds, for tests and benches that watch real processes
 * converge (a ring formed, a log line written, a key replicated).
 *
 * Owns: the polling loop and its deadline. Must not: retry what `check` does (a check that
 * throws ends the wait with its error) or wait without a bound.
 */

/** Poll `check` every `everyMs` until it returns a value or `timeoutMs` passes. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined> | T | undefined,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
