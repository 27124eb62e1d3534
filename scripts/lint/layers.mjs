// The layer rule (STYLE.md #1, after VS Code's): each folder of main/ may import only the folders
// listed for it, so the import graph has no cycle and nothing climbs a layer.
//   base ← domain folders (downward only) ← app ← adapters (ipc, cli, electron)
// preload/{contract,display,events,usage} are shared with the renderer: they import nothing of main/
// but types from main/base/errors.ts. The renderer imports only those shared modules.
import path from 'node:path';

const BASE = ['base'];
/** What each main/ folder may import, besides itself and the shared preload modules. Domain folders in dependency order. */
export const MAIN_LAYERS = {
  base: [],
  namespaces: [...BASE],
  store: [...BASE, 'namespaces'],
  credentials: [...BASE, 'namespaces'],
  auth: [...BASE, 'namespaces', 'credentials'],
  providers: [...BASE, 'namespaces', 'credentials', 'auth'],
  upstreams: [...BASE],
  connections: [...BASE, 'namespaces', 'store', 'credentials', 'auth', 'upstreams'],
  broker: [...BASE, 'upstreams'],
  permissions: [...BASE, 'namespaces', 'store', 'upstreams', 'broker'],
  policy: [...BASE, 'permissions', 'connections'],
  sandbox: [...BASE, 'permissions'],
  gateway: [...BASE, 'providers', 'auth', 'credentials', 'namespaces'],
  runner: [...BASE, 'providers', 'permissions', 'sandbox'],
  agents: [...BASE, 'namespaces', 'store', 'upstreams', 'connections'],
  export: [...BASE, 'store'],
};
const DOMAIN = Object.keys(MAIN_LAYERS);
MAIN_LAYERS.app = [...DOMAIN];
MAIN_LAYERS.ipc = [...DOMAIN, 'app'];
MAIN_LAYERS.cli = [...DOMAIN, 'app'];
MAIN_LAYERS.electron = [...DOMAIN, 'app', 'ipc'];

const SHARED = new Set(['preload/contract', 'preload/display', 'preload/events', 'preload/limits', 'preload/usage']);

function locate(file, root) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const parts = rel.split('/');
  if (parts[0] === 'main' && parts.length > 2) return { area: 'main', folder: parts[1], rel };
  if (parts[0] === 'preload') return { area: 'preload', folder: rel.replace(/\.(ts|tsx|js)$/, ''), rel };
  if (parts[0] === 'renderer') return { area: 'renderer', folder: 'renderer', rel };
  return { area: 'other', folder: parts[0], rel };
}

function violation(from, to, typeOnly) {
  if (from.area === 'main') {
    if (to.area === 'main') {
      if (to.folder === from.folder) return null;
      const allowed = MAIN_LAYERS[from.folder];
      if (allowed === undefined) return `main/${from.folder} is not in the layer map (scripts/lint/layers.mjs): add it where it belongs`;
      if (MAIN_LAYERS[to.folder] === undefined) return `main/${to.folder} is not in the layer map (scripts/lint/layers.mjs)`;
      return allowed.includes(to.folder) ? null : `main/${from.folder} may not import main/${to.folder} (layers: base ← domain ← app ← adapters; see scripts/lint/layers.mjs)`;
    }
    if (to.area === 'preload') return SHARED.has(to.folder) ? null : `main/ may import only the shared preload modules (${[...SHARED].join(', ')}), not ${to.rel}`;
    if (to.area === 'renderer') return 'main/ may not import the renderer';
    return null;
  }
  if (from.area === 'preload' && SHARED.has(from.folder)) {
    if (to.area === 'preload') return SHARED.has(to.folder) ? null : `${from.rel} is shared with the renderer: it may import only the other shared modules`;
    if (to.area === 'main') return typeOnly && to.rel === 'main/base/errors.ts' ? null : `${from.rel} is shared with the renderer: it imports nothing of main/ (types from main/base/errors.ts aside)`;
    return null;
  }
  if (from.area === 'preload') {
    if (to.area === 'main' || to.area === 'renderer') return `${from.rel} may import only the shared preload modules`;
    return null;
  }
  if (from.area === 'renderer') {
    if (to.area === 'main') return 'the renderer is a sandboxed page: it imports no main-process code';
    if (to.area === 'preload' && !SHARED.has(to.folder)) return `the renderer may import only the shared preload modules (${[...SHARED].join(', ')})`;
  }
  return null;
}

export const layersRule = {
  meta: { type: 'problem', docs: { description: 'imports go only downward: base ← domain ← app ← adapters' }, schema: [] },
  create(context) {
    const root = context.cwd;
    const file = context.filename;
    const from = locate(file, root);
    if (!['main', 'preload', 'renderer'].includes(from.area)) return {};
    const checkSource = (node, source, typeOnly) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), source.replace(/\.js$/, '.ts'));
      const message = violation(from, locate(target, root), typeOnly);
      if (message !== null) context.report({ node, message });
    };
    return {
      ImportDeclaration: (node) => checkSource(node, node.source.value, node.importKind === 'type'),
      ExportNamedDeclaration: (node) => node.source && checkSource(node, node.source.value, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => checkSource(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => node.source.type === 'Literal' && checkSource(node, node.source.value, false),
    };
  },
};
