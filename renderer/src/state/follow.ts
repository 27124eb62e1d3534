/**
 * Pushes enter the renderer here. Journal events are parsed as they arrive (incoming-events.ts),
 * so every handler gets typed events. Pushed events can arrive before the call that created their
 * subscription has returned; the router holds them (bounded) until the subscription id is known,
 * then hands them over in order.
 */
import { useEffect, useMemo } from 'react';
import type { PushedEvent, WardApi } from '../../../preload/contract.js';
import { readIncomingEvents } from './incoming-events.js';

const MAX_HELD_PUSHES = 10_000;
/** Subscriptions this page ended; their late pushes are dropped, not held. */
const MAX_REMEMBERED_CLOSED = 1_000;

type Handler = (event: PushedEvent) => void;

export class PushRouter {
  private readonly handlers = new Map<string, Handler>();
  private readonly held = new Map<string, PushedEvent[]>();
  private heldCount = 0;
  private readonly closed = new Set<string>();
  private readonly stop: () => void;

  constructor(api: WardApi) {
    this.stop = api.onEvent((arriving) => {
      const event: PushedEvent = arriving.kind === 'journal' ? { ...arriving, events: readIncomingEvents(arriving.events) } : arriving;
      const handler = this.handlers.get(event.subscriptionId);
      if (handler !== undefined) return handler(event);
      if (this.closed.has(event.subscriptionId) || this.heldCount >= MAX_HELD_PUSHES) return;
      const list = this.held.get(event.subscriptionId) ?? [];
      list.push(event);
      this.held.set(event.subscriptionId, list);
      this.heldCount++;
    });
  }

  /** Routes a subscription's pushes to `handler`, first the ones that arrived early. */
  route(subscriptionId: string, handler: Handler): () => void {
    this.handlers.set(subscriptionId, handler);
    const early = this.held.get(subscriptionId) ?? [];
    this.held.delete(subscriptionId);
    this.heldCount -= early.length;
    for (const event of early) handler(event);
    return () => {
      this.handlers.delete(subscriptionId);
      this.forget(subscriptionId);
    };
  }

  /** Ends a subscription here: what was held for it and whatever still arrives is dropped. */
  forget(subscriptionId: string): void {
    this.heldCount -= this.held.get(subscriptionId)?.length ?? 0;
    this.held.delete(subscriptionId);
    this.closed.add(subscriptionId);
    if (this.closed.size > MAX_REMEMBERED_CLOSED) this.closed.delete(this.closed.values().next().value!);
  }

  close(): void {
    this.stop();
  }
}

/** The window's one router, closed with the window. */
export function usePushRouter(api: WardApi): PushRouter {
  const router = useMemo(() => new PushRouter(api), [api]);
  useEffect(() => () => router.close(), [router]);
  return router;
}
