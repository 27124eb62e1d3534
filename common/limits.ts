/**
 * Bounds shared by the window, the IPC contract and the `ward` command. Kept apart from
 * contract.ts, whose schemas (zod) a command that only needs a number should not build.
 */

/** The longest prompt Ward takes, from any window or terminal (one limit for every entry point), in UTF-16 code units. */
export const MAX_PROMPT_CHARS = 100_000;
