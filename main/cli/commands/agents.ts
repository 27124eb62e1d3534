import { EXIT, WardError } from '../../base/errors.js';
import { parseToolSelector, parseUpstreamOption, type StdioUpstream } from '../../app/agents.js';
import { agentSummary, type AgentDetail } from '../../app/agent-catalog.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { readBoundedFile, writeJson, writeLine } from '../io.js';
import { escapeForDisplay, escapeOneLine } from '../../../common/display.js';

const MAX_INSTRUCTIONS_BYTES = 256 * 1024;

export const agentsCommand: Command = {
  name: 'agents',
  usage:
    'ward agents create NAME --instructions-file FILE [--upstream NAME=COMMAND [ARGS...]]... [--upstream-env UPSTREAM=VAR]... [--tool UPSTREAM/TOOL|UPSTREAM/*|CONNECTION/TOOL|CONNECTION/*]... [--model-profile P] | ward agents list | ward agents show NAME [--version N]  [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, {
      ...COMMON_OPTIONS,
      'instructions-file': { type: 'string' },
      upstream: { type: 'string', multiple: true },
      'upstream-env': { type: 'string', multiple: true },
      tool: { type: 'string', multiple: true },
      'model-profile': { type: 'string' },
      version: { type: 'string' },
    });
    const action = requirePositional(this, positionals, 0, 'an action (create, list or show)');
    const store = app().namespaces.fromFlag(values.namespace);

    if (action === 'list') {
      const rows = app().agentCatalog.list(store);
      if (rows.length === 0 && !values.json) writeLine(io.stdout, `no agents in namespace ${store.namespace.name} yet; publish one with "ward --namespace ${store.namespace.name} agents create NAME --instructions-file FILE"`);
      for (const row of rows) {
        if (values.json) writeJson(io.stdout, row);
        else writeLine(io.stdout, `${`${row.name}@${row.version}`.padEnd(24)} ${row.tools.length} tool(s)  ${row.tools.join(', ')}`);
      }
      return EXIT.ok;
    }
    if (action === 'show') {
      const name = requirePositional(this, positionals, 1, 'an agent name');
      if (values.version !== undefined && !/^\d{1,9}$/.test(values.version)) throw new WardError('usage', '--version takes a number');
      const agent = app().agentCatalog.show(store, name, values.version === undefined ? undefined : Number(values.version));
      if (values.json) writeJson(io.stdout, { ...agent.summary, spec: agent.stored });
      else writeLine(io.stdout, describeAgent(agent));
      return EXIT.ok;
    }
    if (action !== 'create') throw new WardError('usage', `unknown action ${JSON.stringify(action.slice(0, 40))}\nusage: ${this.usage}`);

    const name = requirePositional(this, positionals, 1, 'an agent name');
    const file = values['instructions-file'];
    if (file === undefined) throw new WardError('usage', `ward agents create needs --instructions-file FILE\nusage: ${this.usage}`);
    const instructions = readBoundedFile(file, { what: 'the instructions file', maxBytes: MAX_INSTRUCTIONS_BYTES });
    const upstreams: Record<string, StdioUpstream> = {};
    for (const option of values.upstream ?? []) {
      const [upstreamName, upstream] = parseUpstreamOption(option, process.cwd());
      if (upstreams[upstreamName] !== undefined) throw new WardError('usage', `upstream ${upstreamName} is given twice`);
      upstreams[upstreamName] = upstream;
    }
    for (const option of values['upstream-env'] ?? []) {
      const [upstreamName, variable] = option.split('=', 2);
      const upstream = upstreamName === undefined ? undefined : upstreams[upstreamName];
      if (upstream === undefined || variable === undefined || variable === '') throw new WardError('usage', `--upstream-env takes UPSTREAM=VARIABLE for an upstream given with --upstream, not ${JSON.stringify(option.slice(0, 80))}`);
      upstream.envNames.push(variable);
    }
    const agents = await app().agents();
    const version = await agents.create(store, {
      name,
      instructions,
      ...(values['model-profile'] === undefined ? {} : { modelProfile: values['model-profile'] }),
      upstreams,
      tools: (values.tool ?? []).map(parseToolSelector),
    });
    const row = agentSummary(version);
    if (values.json) writeJson(io.stdout, row);
    else writeLine(io.stdout, `published ${row.name}@${row.version} with ${row.tools.length} pinned tool(s)${row.tools.length > 0 ? `: ${row.tools.join(', ')}` : ''}`);
    return EXIT.ok;
  },
};

/** `agents show` for a person: what the agent is told, what it runs with, which tools it has and where they come from. */
function describeAgent({ summary, spec, tools }: AgentDetail): string {
  const lines = [`${summary.name}@${summary.version}, published ${summary.publishedAt}`, `model profile: ${escapeOneLine(spec.modelProfile, 100)}`];
  for (const [name, upstream] of Object.entries(spec.upstreams)) {
    lines.push(`upstream ${name}: ${[upstream.command, ...upstream.args].map((part) => escapeOneLine(part, 200)).join(' ')}${upstream.envNames.length > 0 ? ` (gets ${upstream.envNames.join(', ')})` : ''}`);
  }
  lines.push(tools.length === 0 ? 'tools: none' : `tools (${tools.length}):`);
  for (const tool of tools) lines.push(`  ${escapeOneLine(tool.exposedName, 120)}  from ${escapeOneLine(tool.source, 120)}${tool.description === '' ? '' : ` — ${escapeOneLine(tool.description, 100)}`}`);
  lines.push('instructions:', ...spec.instructions.split('\n').map((line) => `  ${escapeForDisplay(line, 2_000)}`));
  return lines.join('\n');
}

