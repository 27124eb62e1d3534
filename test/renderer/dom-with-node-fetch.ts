/**
 * A happy-dom document for a test that also runs main's side in-process: main talks to real MCP
 * servers with Node's fetch, which the happy-dom environment would replace with its own (a
 * browser-like fetch that enforces CORS and is no faithful HTTP client). Import this first, in a
 * file without the happy-dom environment docblock.
 */
import { afterAll } from 'vitest';
import { Window } from 'happy-dom';
import { populateGlobal } from 'vitest/runtime';

const window = new Window({ url: 'http://localhost:3000' });
// The default keys leave fetch, Request, Response, Headers, URL and AbortController to Node.
const { keys, originals } = populateGlobal(globalThis, window, { bindFunctions: true });

afterAll(async () => {
  await window.happyDOM.close();
  for (const key of keys) delete (globalThis as Record<string, unknown>)[key];
  for (const [key, value] of originals) (globalThis as Record<string | symbol, unknown>)[key] = value;
});
