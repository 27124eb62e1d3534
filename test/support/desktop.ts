import { WardApp } from '../../main/app/ward-app.js';
import { DesktopIpc } from '../../main/ipc/handlers.js';
import type { DataFolder } from '../../main/store/data-folder.js';

/** The desktop's IPC adapter over the real app on an open data folder, with no admin policy. */
export function desktopIpcFor(folder: DataFolder, env: NodeJS.ProcessEnv = {}): DesktopIpc {
  return new DesktopIpc(new WardApp({ folder, env, policy: null }));
}
