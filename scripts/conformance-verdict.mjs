// How scripts/conformance.mjs judges one scenario's run against a suite's baseline file: the
// suite's exit code (its own baseline rules: an unlisted failure or a stale entry is exit 1), plus
// what the suite does not check itself: Ward's client crashing or timing out, the
// `client-exits-with-error` list, and checks that must pass inside a scenario listed as failing.
import fs from 'node:fs';
import path from 'node:path';

/** Checks that must pass even where the baseline expects the scenario as a whole to fail. */
export const MUST_PASS = { 'dns-rebinding-protection': ['localhost-host-rebinding-rejected'] };

/**
 * The suite's check results of one scenario, from the folder it wrote them to
 * (`[server-]SCENARIO-TIMESTAMP`; the timestamp is matched too, since auth/iss-supported is a
 * prefix of auth/iss-supported-missing, which may be running at the same time).
 */
export function checksOf(folder, mode, scenario) {
  const named = path.join(folder, mode === 'server' ? `server-${scenario}` : scenario);
  const parent = path.dirname(named);
  const prefix = `${path.basename(named)}-`;
  const ours = (name) => name.startsWith(prefix) && /^\d{4}-\d\d-\d\dT[\d-]+Z$/.test(name.slice(prefix.length));
  const latest = (fs.existsSync(parent) ? fs.readdirSync(parent).filter(ours) : []).sort().at(-1);
  const file = latest === undefined ? '' : path.join(parent, latest, 'checks.json');
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : [];
}

/** The entries of one top-level list (`client:`, `server:`, `client-exits-with-error:`) of a baseline file's text. */
export function baselineEntries(text, section) {
  const part = text.split(/^(?=[\w-]+:)/m).find((candidate) => candidate.startsWith(`${section}:`)) ?? '';
  return [...part.matchAll(/^\s+- (\S+?)\s*(?:#.*)?$/gm)].map((match) => match[1]);
}

/**
 * One scenario's run judged against the baseline: `why` it is not acceptable (null when it is),
 * whether it `passed` outright (every check, and Ward's client), and a `note` on what the baseline
 * expects of it.
 */
export function verdict({ baseline, mode, scenario, code, output, checks }) {
  const listed = baselineEntries(baseline, mode);
  const whole = listed.includes(scenario);
  const checkIds = listed.filter((entry) => entry.startsWith(`${scenario}:`)).map((entry) => entry.slice(scenario.length + 1));
  const exitsWithError = mode === 'client' && baselineEntries(baseline, 'client-exits-with-error').includes(scenario);
  const clientFailed = /CLIENT TIMED OUT|CLIENT EXITED WITH ERROR/.test(output);
  const why = (() => {
    if (code === null) return 'the suite did not finish in time';
    if (code !== 0) return 'unexpected failure, warning or stale baseline entry';
    if (exitsWithError && whole) return `${scenario} is listed both as failing and under client-exits-with-error; keep one`;
    if (exitsWithError && !clientFailed) return "stale baseline entry: listed under client-exits-with-error, but Ward's client succeeded";
    if (clientFailed && !whole && !exitsWithError) return "Ward's client crashed or timed out";
    const missed = (MUST_PASS[scenario] ?? []).find((id) => checks.find((check) => check.id === id)?.status !== 'SUCCESS');
    return missed === undefined ? null : `check ${missed} did not pass`;
  })();
  const passed = why === null && !exitsWithError && !clientFailed && checks.length > 0 && checks.every((check) => check.status !== 'FAILURE' && check.status !== 'WARNING');
  const note = whole ? ' (expected to fail: baseline)' : checkIds.length > 0 ? ` (expected to fail: ${checkIds.join(', ')})` : exitsWithError ? " (expected: Ward's client exits with an error)" : '';
  return { why, passed, note };
}
