// The layer rule (after VS Code's): each folder of main/ may import only the folders listed for
// it, so the import graph has no cycle and nothing climbs a layer.
//   common, base ← domain folders (downward only) ← app ← adapters (cli, ipc, electron)
// Adapters import only app/, base/ and common/: a use case exists once, in app/, so the desktop and
// the CLI cannot drift. common/ is process-neutral vocabulary (journal events, views, usage, display
// escaping, limits) shared by main, preload and the renderer: it imports nothing of Ward but other
// common/ modules and types from main/base/errors.ts. preload/contract is the IPC contract, shared the
// same way. The renderer imports only common/ and the contract.
// Every way of naming a module is checked: import/export declarations, `import()` (a template
// literal too), `typeof import('…')`, `require('…')` and `createRequire(…)('…')`.
import path from 'node:path';

const BASE = ['base'];
/**
 * What each main/ folder may import, besides itself and common/: only the edges the code uses
 * (test/lint/layers.test.ts fails on an edge listed here that no file uses). Domain folders in
 * dependency order.
 */
export const MAIN_LAYERS = {
  base: [],
  namespaces: [...BASE],
  store: [...BASE, 'namespaces'],
  credentials: [...BASE, 'namespaces'],
  auth: [...BASE, 'namespaces', 'credentials'],
  providers: [...BASE, 'namespaces', 'credentials'],
  upstreams: [...BASE],
  connections: [...BASE, 'namespaces', 'store', 'credentials', 'auth', 'upstreams'],
  broker: [...BASE, 'upstreams'],
  permissions: [...BASE, 'namespaces', 'upstreams'],
  policy: [...BASE, 'permissions', 'connections'],
  sandbox: [...BASE, 'permissions'],
  gateway: [...BASE, 'providers'],
  runner: [...BASE, 'sandbox'],
  agents: [...BASE, 'namespaces', 'store', 'upstreams', 'connections'],
  export: [...BASE, 'store'],
  audit: [...BASE, 'store'],
  changes: [...BASE],
};
const DOMAIN = Object.keys(MAIN_LAYERS);
MAIN_LAYERS.app = [...DOMAIN];
MAIN_LAYERS.ipc = [...BASE, 'app'];
MAIN_LAYERS.cli = [...BASE, 'app'];
MAIN_LAYERS.electron = ['ipc'];

/** The adapters: they translate to and from app/ and nothing else. */
export const ADAPTERS = ['cli', 'ipc', 'electron'];

const SHARED = new Set(['preload/contract']);

function locate(file, root) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const parts = rel.split('/');
  if (parts[0] === 'main' && parts.length > 2) return { area: 'main', folder: parts[1], rel };
  if (parts[0] === 'main') return { area: 'main-root', folder: 'main', rel };
  if (parts[0] === 'common') return { area: 'common', folder: 'common', rel };
  if (parts[0] === 'preload') return { area: 'preload', folder: rel.replace(/\.(ts|tsx|js)$/, ''), rel };
  if (parts[0] === 'renderer') return { area: 'renderer', folder: 'renderer', rel };
  return { area: 'other', folder: parts[0], rel };
}

function fromMain(from, to) {
  if (to.area === 'main') {
    if (to.folder === from.folder) return null;
    const allowed = MAIN_LAYERS[from.folder];
    if (allowed === undefined) return `main/${from.folder} is not in the layer map (scripts/lint/layers.mjs): add it where it belongs`;
    if (MAIN_LAYERS[to.folder] === undefined) return `main/${to.folder} is not in the layer map (scripts/lint/layers.mjs)`;
    if (allowed.includes(to.folder)) return null;
    if (ADAPTERS.includes(from.folder)) return `main/${from.folder} is an adapter: it imports only main/app, main/base and common/ (not main/${to.folder}); call or add an app service`;
    return `main/${from.folder} may not import main/${to.folder} (layers: base ← domain ← app ← adapters; see scripts/lint/layers.mjs)`;
  }
  if (to.area === 'main-root') return `${to.rel} sits directly in main/: put it in the folder of its layer`;
  if (to.area === 'common') return null;
  if (to.area === 'preload') {
    if (!SHARED.has(to.folder)) return `main/ may import only common/ and the IPC contract (preload/contract), not ${to.rel}`;
    return ['app', 'ipc', 'electron'].includes(from.folder) ? null : `main/${from.folder} may not import the IPC contract: only app/ and the desktop's adapters speak it`;
  }
  if (to.area === 'renderer') return 'main/ may not import the renderer';
  return null;
}

function violation(from, to, typeOnly) {
  if (from.area === 'main-root') return `${from.rel} sits directly in main/: put it in the folder of its layer`;
  if (from.area === 'main') return fromMain(from, to);
  if (from.area === 'common' || (from.area === 'preload' && SHARED.has(from.folder))) {
    if (from.area === 'common' && to.area === 'preload') return `${from.rel} is process-neutral vocabulary: it may not import preload/`;
    if (to.area === 'preload') return SHARED.has(to.folder) ? null : `${from.rel} is shared with the renderer: it may import only common/`;
    if (to.area === 'renderer') return `${from.rel} is shared: it may not import the renderer`;
    if (to.area === 'main' || to.area === 'main-root') return typeOnly && to.rel === 'main/base/errors.ts' ? null : `${from.rel} is shared with the renderer: it imports nothing of main/ (types from main/base/errors.ts aside)`;
    return null;
  }
  if (from.area === 'preload') {
    if (to.area === 'main' || to.area === 'main-root' || to.area === 'renderer') return `${from.rel} may import only common/ and the IPC contract`;
    return null;
  }
  if (from.area === 'renderer') {
    if (to.area === 'main' || to.area === 'main-root') return 'the renderer is a sandboxed page: it imports no main-process code';
    if (to.area === 'preload' && !SHARED.has(to.folder)) return 'the renderer may import only common/ and the IPC contract (preload/contract)';
  }
  return null;
}

/** The module a node names, when it is written out: a string, or a template literal without `${}`. */
function literalSource(node) {
  if (node?.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node?.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0].value.cooked;
  return undefined;
}

/** `fileURLToPath(import.meta.resolve('package'))`: a package by name, which no layer rule is about. */
function resolvesPackage(node) {
  const inner = node?.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'fileURLToPath' ? node.arguments[0] : undefined;
  const resolved = inner?.type === 'CallExpression' && inner.callee.type === 'MemberExpression' && inner.callee.object.type === 'MetaProperty' && inner.callee.property.name === 'resolve';
  const name = resolved ? literalSource(inner.arguments[0]) : undefined;
  return name !== undefined && !name.startsWith('.');
}

const isCreateRequire = (callee) => callee.type === 'CallExpression' && callee.callee.type === 'Identifier' && callee.callee.name === 'createRequire';

export const layersRule = {
  meta: { type: 'problem', docs: { description: 'imports go only downward: common, base ← domain ← app ← adapters' }, schema: [] },
  create(context) {
    const root = context.cwd;
    const file = context.filename;
    const from = locate(file, root);
    if (!['main', 'main-root', 'common', 'preload', 'renderer'].includes(from.area)) return {};
    const checkSource = (node, source, typeOnly) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), source.replace(/\.js$/, '.ts'));
      const message = violation(from, locate(target, root), typeOnly);
      if (message !== null) context.report({ node, message });
    };
    const checkDynamic = (node, sourceNode) => {
      const source = literalSource(sourceNode);
      if (source !== undefined) return checkSource(node, source, false);
      if (resolvesPackage(sourceNode)) return;
      if (from.area !== 'renderer') context.report({ node, message: 'a module named by a computed path cannot be checked against the layers: name it with a string' });
    };
    return {
      Program: (node) => {
        if (from.area === 'main-root') context.report({ node, message: violation(from, from, false) });
      },
      ImportDeclaration: (node) => checkSource(node, node.source.value, node.importKind === 'type'),
      ExportNamedDeclaration: (node) => node.source && checkSource(node, node.source.value, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => checkSource(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => checkDynamic(node, node.source),
      TSImportType: (node) => checkSource(node, literalSource(node.argument?.literal ?? node.argument), true),
      CallExpression: (node) => {
        const required = (node.callee.type === 'Identifier' && node.callee.name === 'require') || isCreateRequire(node.callee);
        if (required && node.arguments.length > 0) checkDynamic(node, node.arguments[0]);
      },
    };
  },
};
