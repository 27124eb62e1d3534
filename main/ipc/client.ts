/** Whoever calls the IPC adapter, shared by the dispatcher and the handlers (neither imports the other for it). */
import type { PushedEvent } from '../../preload/contract.js';

/** Whoever is calling: one window (or test page). Its subscriptions end with `releaseClient`. */
export interface Client {
  readonly id: string;
  /** A review window: it reaches the bundles it shows and nothing of any namespace (E4). */
  readonly reviewOnly?: boolean;
  push(event: PushedEvent): void;
}
