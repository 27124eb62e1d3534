/**
 * Opening the person's browser, for the adapters' sign-in flows: the CLI prints the address and
 * opens it; the desktop opens it through Electron's shell instead.
 */
export { openSystemBrowser, type OpenBrowser } from '../auth/browser.js';
