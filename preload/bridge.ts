/**
 * The preload: exposes `window.ward` (the contract's purpose-named functions and one typed event
 * subscription) and nothing else — never ipcRenderer itself.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { buildWardApi, EVENT_CHANNEL, wireChannel, type IpcResult, type PushedEvent } from './contract.js';

const api = buildWardApi(
  (channel, payload) => ipcRenderer.invoke(wireChannel(channel), payload) as Promise<IpcResult<unknown>>,
  (listener) => {
    // Only the pushed value reaches the page, never the IpcRendererEvent (it carries `sender`).
    const handler = (_event: IpcRendererEvent, pushed: PushedEvent) => listener(pushed);
    ipcRenderer.on(EVENT_CHANNEL, handler);
    return () => {
      ipcRenderer.removeListener(EVENT_CHANNEL, handler);
    };
  },
);

contextBridge.exposeInMainWorld('ward', api);
