// The layer rule (STYLE.md #1, after VS Code's): each folder of main/ may import only the folders
// listed for it, so the import graph has no cycle and nothing climbs a layer.
//   base ← domain folders (downward only) ← app ← adapters (ipc, cli, electron)
// common/ is process-neutral vocabulary (journal events, usage, display escaping, limits) shared by
// main, preload and the renderer: it imports nothing of Ward but other common/ modules and types from
// main/base/errors.ts. preload/contract is the IPC contract, shared the same way. The renderer imports
// only common/ and the contract.
import path from 'node:path';

const BASE = ['base'];
/** What each main/ folder may import, besides itself, common/ and the IPC contract. Domain folders in dependency order. */
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

const SHARED = new Set(['preload/contract']);

function locate(file, root) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const parts = rel.split('/');
  if (parts[0] === 'main' && parts.length > 2) return { area: 'main', folder: parts[1], rel };
  if (parts[0] === 'common') return { area: 'common', folder: 'common', rel };
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
    if (to.area === 'common') return null;
    if (to.area === 'preload') return SHARED.has(to.folder) ? null : `main/ may import only common/ and the IPC contract (preload/contract), not ${to.rel}`;
    if (to.area === 'renderer') return 'main/ may not import the renderer';
    return null;
  }
  if (from.area === 'common' || (from.area === 'preload' && SHARED.has(from.folder))) {
    if (from.area === 'common' && to.area === 'preload') return `${from.rel} is process-neutral vocabulary: it may not import preload/`;
    if (to.area === 'preload') return SHARED.has(to.folder) ? null : `${from.rel} is shared with the renderer: it may import only common/`;
    if (to.area === 'renderer') return `${from.rel} is shared: it may not import the renderer`;
    if (to.area === 'main') return typeOnly && to.rel === 'main/base/errors.ts' ? null : `${from.rel} is shared with the renderer: it imports nothing of main/ (types from main/base/errors.ts aside)`;
    return null;
  }
  if (from.area === 'preload') {
    if (to.area === 'main' || to.area === 'renderer') return `${from.rel} may import only common/ and the IPC contract`;
    return null;
  }
  if (from.area === 'renderer') {
    if (to.area === 'main') return 'the renderer is a sandboxed page: it imports no main-process code';
    if (to.area === 'preload' && !SHARED.has(to.folder)) return 'the renderer may import only common/ and the IPC contract (preload/contract)';
  }
  return null;
}

export const layersRule = {
  meta: { type: 'problem', docs: { description: 'imports go only downward: base ← domain ← app ← adapters' }, schema: [] },
  create(context) {
    const root = context.cwd;
    const file = context.filename;
    const from = locate(file, root);
    if (!['main', 'common', 'preload', 'renderer'].includes(from.area)) return {};
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
