/**
 * The connections as the desktop window sees them (app-service ConnectionPort): public metadata
 * and state only; no secret, token or secret-variable value is in a view (C3, U3).
 */
import type { ConnectionView as WindowConnectionView } from '../../preload/contract.js';
import type { ConnectionPort } from '../core/app-service.js';
import type { WardCore } from '../core/ward-core.js';
import type { OpenStoreOptions } from '../credentials/open-store.js';
import { exposedToolName } from './config.js';
import { openConnections } from './index.js';
import type { ConnectionView } from './manager.js';

const STATUS: Record<ConnectionView['health'], WindowConnectionView['status']> = {
  ok: 'signed_in',
  not_signed_in: 'signed_out',
  error: 'error',
  unknown: 'unknown',
};

export function toWindowView(view: ConnectionView): WindowConnectionView {
  const { spec } = view;
  const detail =
    view.health === 'not_signed_in'
      ? `Sign in again ("ward connections login ${spec.name}").`
      : view.health === 'error'
        ? `Last failure: ${view.lastErrorCode ?? 'unknown'}.`
        : null;
  const changed = view.tools.filter((pin) => pin.status !== 'pinned').map((pin) => `${pin.name}: ${pin.reason ?? pin.status}`);
  return {
    id: spec.name,
    name: spec.name,
    url: spec.transport === 'http' ? spec.url : [spec.command, ...spec.args].join(' '),
    status: STATUS[view.health],
    detail: changed.length === 0 ? detail : [detail, `Disabled until re-pinned: ${changed.join('; ')}`].filter((part) => part !== null).join(' '),
    tools: view.tools.filter((pin) => pin.enabled && pin.status === 'pinned').map((pin) => exposedToolName(pin.connection, pin.name)),
  };
}

/** A ConnectionPort over the namespace registries of `core`. */
export function connectionPort(core: WardCore, options: { store?: OpenStoreOptions } = {}): ConnectionPort {
  return {
    async list(namespace) {
      const manager = openConnections(core, namespace, options);
      try {
        return manager.list().map(toWindowView);
      } finally {
        await manager.close();
      }
    },
  };
}
