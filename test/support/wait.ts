/** Waits, polling every few milliseconds, until `check` holds; fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
