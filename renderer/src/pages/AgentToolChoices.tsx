/** The tool fieldsets of the agent editor: pinned tools to keep, and connection tools to add. */
import type { AgentView, ConnectionView } from '../../../common/views.js';

/** `set` with every one of `items` added (on) or removed (off). */
export function setAll(set: ReadonlySet<string>, items: readonly string[], on: boolean): ReadonlySet<string> {
  const next = new Set(set);
  for (const item of items) {
    if (on) next.add(item);
    else next.delete(item);
  }
  return next;
}

const flip = (set: ReadonlySet<string>, item: string) => setAll(set, [item], !set.has(item));

export function PinnedTools({ tools, keep, onKeep }: { readonly tools: AgentView['tools']; readonly keep: ReadonlySet<string>; readonly onKeep: (keep: ReadonlySet<string>) => void }) {
  return (
    <fieldset>
      <legend>Tools pinned in this agent</legend>
      {tools.length === 0 && <p className="muted">No pinned tools yet.</p>}
      {tools.map((tool) => (
        <label key={tool.name} className="checkbox">
          <input type="checkbox" checked={keep.has(tool.name)} onChange={() => onKeep(flip(keep, tool.name))} /> <code>{tool.name}</code>{' '}
          <span className="muted">
            from {tool.upstream}
            {tool.description ? ` — ${tool.description}` : ''}
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** What each connection offers that the agent does not pin yet (`CONNECTION__TOOL` listed, `CONNECTION/TOOL` chosen). */
export interface Offer {
  readonly connection: ConnectionView;
  readonly tools: readonly string[];
}

/** The window lists exposed names (`CONNECTION__TOOL`); publishing takes `CONNECTION/TOOL`. */
export function offeredTools(connections: readonly ConnectionView[], pinned: ReadonlySet<string>): Offer[] {
  return connections
    .map((connection) => ({
      connection,
      tools: connection.tools.filter((exposed) => exposed.startsWith(`${connection.name}__`) && !pinned.has(exposed)).map((exposed) => exposed.slice(connection.name.length + 2)),
    }))
    .filter((entry) => entry.tools.length > 0);
}

export function OfferedTools({ offered, add, onAdd }: { readonly offered: readonly Offer[]; readonly add: ReadonlySet<string>; readonly onAdd: (add: ReadonlySet<string>) => void }) {
  return (
    <fieldset>
      <legend>Add tools from connections</legend>
      {offered.length === 0 && <p className="muted">No connection offers tools this agent lacks. Add and check one on the Connections page.</p>}
      {offered.map(({ connection, tools: names }) => {
        const choices = names.map((tool) => ({ tool, selector: `${connection.name}/${tool}` }));
        const selectors = choices.map((choice) => choice.selector);
        const all = selectors.every((selector) => add.has(selector));
        return (
          <fieldset key={connection.name} className="connection-choice">
            <legend>{connection.name}</legend>
            <label className="checkbox">
              <input type="checkbox" checked={all} onChange={() => onAdd(setAll(add, selectors, !all))} /> every tool of {connection.name}
            </label>
            {choices.map(({ tool, selector }) => (
              <label key={selector} className="checkbox">
                <input type="checkbox" checked={add.has(selector)} onChange={() => onAdd(flip(add, selector))} /> <code>{tool}</code> <span className="muted">from {connection.name}</span>
              </label>
            ))}
          </fieldset>
        );
      })}
    </fieldset>
  );
}
