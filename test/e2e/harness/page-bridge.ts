/**
 * Injected into the test page before any of its scripts: builds `window.ward` from the same
 * contract code the preload uses, over a Playwright binding to the real core in the test process.
 */
import { buildWardApi, type IpcResult, type PushedEvent } from '../../../preload/contract.js';

interface HarnessWindow {
  __wardInvoke(channel: string, payload: unknown): Promise<IpcResult<unknown>>;
  __wardPush?: (event: PushedEvent) => void;
  ward?: unknown;
}

const host = window as unknown as HarnessWindow;
const listeners = new Set<(event: PushedEvent) => void>();
host.__wardPush = (event) => {
  for (const listener of listeners) listener(event);
};
host.ward = buildWardApi(
  (channel, payload) => host.__wardInvoke(channel, payload),
  (listener) => {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  },
);
