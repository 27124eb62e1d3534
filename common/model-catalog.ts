/**
 * The models the pinned Claude CLI (@anthropic-ai/claude-code 2.1.328) has prices for: its
 * CATALOG_MODEL_IDS and its aliases. For any other model the CLI still reports a cost, priced at a
 * default tier it picks: a guess, which Ward never shows as a cost. Update with the pin.
 * Shared by main and the renderer: no Node, no Electron.
 */

/** CATALOG_MODEL_IDS of the pinned CLI, verbatim. */
export const CLI_CATALOG_MODELS: readonly string[] = [
  'claude-3-5-haiku',
  'claude-3-5-sonnet',
  'claude-3-7-sonnet',
  'claude-fable-5',
  'claude-fable-5-1',
  'claude-fable-5-2',
  'claude-haiku-4-5',
  'claude-haiku-5-5',
  'claude-mythos-5',
  'claude-mythos-5-1',
  'claude-mythos-5-2',
  'claude-opus-4-0',
  'claude-opus-4-1',
  'claude-opus-4-5',
  'claude-opus-4-6',
  'claude-opus-4-7',
  'claude-opus-4-8',
  'claude-opus-5',
  'claude-opus-5-5',
  'claude-sonnet-4-0',
  'claude-sonnet-4-5',
  'claude-sonnet-4-6',
  'claude-sonnet-5',
  'claude-sonnet-5-5',
];

/** The CLI's model aliases (without a [1m] context suffix), each resolved to a catalog model. */
const CLI_ALIASES: readonly string[] = ['sonnet', 'opus', 'haiku', 'fable', 'best', 'opusplan'];

/** What the CLI accepts after a catalog id: -fast or -latest, a date snapshot, a provider version. */
const SNAPSHOT_SUFFIX = /^(?:-fast|-latest)?(?:-v\d{1,3}@\d{8}|[-@]\d{8})?(?:-v\d{1,3}(?::\d{1,3})?)?$/;

/** A provider's spelling of a model as the CLI reads it: `us.anthropic.claude-…`, `…/claude-…`, `claude-opus-4.5`. */
function canonical(model: string): string {
  let name = model.trim().toLowerCase().replace(/\[[12]m\]$/, '');
  name = name.slice(name.lastIndexOf('/') + 1);
  name = name.replace(/^(?:[a-z-]+\.)?anthropic\.(?=claude-)/, '');
  return name.replace(/(claude-(?:[a-z]+-)?\d{1,2})\.(?=\d)/g, '$1-');
}

/** Whether the pinned CLI prices this model from its catalog (else its cost would be a guess). */
export function cliPricesModel(model: string): boolean {
  const name = canonical(model);
  if (CLI_ALIASES.includes(name)) return true;
  return CLI_CATALOG_MODELS.some((id) => {
    // A catalog id ending in -0 is also written without it (claude-opus-4-20250514).
    const bases = id.endsWith('-0') ? [id, id.slice(0, -2)] : [id];
    return bases.some((base) => name.startsWith(base) && SNAPSHOT_SUFFIX.test(name.slice(base.length)));
  });
}
