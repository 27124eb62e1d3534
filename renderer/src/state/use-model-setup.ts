/** Whether the namespace can reach a model (a stored key, or one in Ward's environment), and a way to open the setup card. */
import { useCallback, useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { SettingsView } from '../../../common/views.js';
import { unwrap } from '../api.js';

export interface ModelSetup {
  /** null until main has answered. */
  readonly settings: SettingsView | null;
  /** No key stored and none in the environment: the Chats page shows the setup card. */
  readonly needed: boolean;
  readonly refresh: () => void;
}

/** Asked again when the page changes: a key stored or removed in Settings changes the answer. */
export function useModelSetup(api: WardApi, scope: { readonly ready: boolean; readonly namespace: string }, page: string): ModelSetup {
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const [asked, setAsked] = useState(0);
  const refresh = useCallback(() => setAsked((count) => count + 1), []);
  useEffect(() => {
    if (!scope.ready) return;
    let cancelled = false;
    unwrap(api.settings.get({ namespace: scope.namespace }))
      .then((view) => !cancelled && setSettings(view))
      // The setup card is the fallback for a namespace main cannot describe: nothing to show here.
      .catch(() => !cancelled && setSettings(null));
    return () => {
      cancelled = true;
    };
  }, [api, scope.ready, scope.namespace, page, asked]);
  return { settings, needed: settings !== null && !settings.keySet && !settings.environmentKey, refresh };
}

const OPEN_SETUP = 'ward:open-setup';

/** Opens the setup card (the Chats page, no chat chosen): what every no-key error's button does. */
export function openSetup(): void {
  window.dispatchEvent(new Event(OPEN_SETUP));
}

/** Calls `onOpen` each time something asks for the setup card. */
export function useSetupRequests(onOpen: () => void): void {
  useEffect(() => {
    window.addEventListener(OPEN_SETUP, onOpen);
    return () => window.removeEventListener(OPEN_SETUP, onOpen);
  }, [onOpen]);
}
