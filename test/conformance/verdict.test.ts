/** How `npm run conformance` judges a scenario against a suite's baseline (scripts/conformance-verdict.mjs). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { baselineEntries, checksOf, verdict } from '../../scripts/conformance-verdict.mjs';

const BASELINES = ['baseline.yml', 'baseline-2026.yml'].map((name) => path.join(import.meta.dirname, name));
const BASELINE = `client:
  # why
  - auth/dpop
  - auth/iss-wrong-issuer:sep-2468-client-compare-iss-supported # one check
client-exits-with-error:
  # why
  - auth/iss-supported
server:
  # why
  - dns-rebinding-protection
`;
const PASSING = [{ id: 'a', status: 'SUCCESS' }];
const FAILING = [{ id: 'a', status: 'FAILURE' }];
const CRASHED = 'Passed: 1/1\n⚠️  CLIENT EXITED WITH ERROR (code 1) - Test may be incomplete';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});

function resultsFolder(files: Record<string, unknown>): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-conformance-results-'));
  folders.push(folder);
  for (const [dir, checks] of Object.entries(files)) {
    fs.mkdirSync(path.join(folder, dir), { recursive: true });
    if (checks !== undefined) fs.writeFileSync(path.join(folder, dir, 'checks.json'), JSON.stringify(checks));
  }
  return folder;
}

describe('the conformance verdict', () => {
  it('test_a_scenario_reads_its_own_results_not_those_of_a_longer_name_it_prefixes', () => {
    const folder = resultsFolder({
      'auth/iss-supported-2026-12-01T18-48-50-000Z': PASSING,
      'auth/iss-supported-missing-2026-12-01T18-48-55-968Z': FAILING,
    });
    expect(checksOf(folder, 'client', 'auth/iss-supported')).toEqual(PASSING);
  });

  it('test_a_scenario_still_being_written_by_another_run_reads_as_no_results_instead_of_crashing', () => {
    const folder = resultsFolder({ 'auth/iss-supported-missing-2026-12-01T18-48-55-968Z': undefined });
    expect(checksOf(folder, 'client', 'auth/iss-supported')).toEqual([]);
    expect(checksOf(folder, 'client', 'auth/iss-supported-missing')).toEqual([]);
  });

  it('test_an_unlisted_failure_or_a_stale_entry_fails_and_a_listed_failure_is_expected', () => {
    // The suite itself exits 1 for an unlisted failure and for a listed scenario that passes.
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'request-metadata', code: 1, output: '', checks: FAILING }).why).toBe('unexpected failure, warning or stale baseline entry');
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'auth/dpop', code: 0, output: '', checks: FAILING })).toEqual({ why: null, passed: false, note: ' (expected to fail: baseline)' });
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'auth/iss-wrong-issuer', code: 0, output: '', checks: FAILING }).note).toBe(' (expected to fail: sep-2468-client-compare-iss-supported)');
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'tools_call', code: 0, output: '', checks: PASSING })).toEqual({ why: null, passed: true, note: '' });
  });

  it('test_a_client_that_exits_with_an_error_fails_the_run_unless_the_baseline_expects_it', () => {
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'tools_call', code: 0, output: CRASHED, checks: PASSING }).why).toBe("Ward's client crashed or timed out");
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'auth/iss-supported', code: 0, output: CRASHED, checks: PASSING })).toEqual({
      why: null,
      passed: false,
      note: " (expected: Ward's client exits with an error)",
    });
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'auth/dpop', code: 0, output: CRASHED, checks: FAILING }).why).toBeNull();
  });

  it('test_a_client_exits_with_error_entry_whose_client_now_succeeds_is_stale', () => {
    expect(verdict({ baseline: BASELINE, mode: 'client', scenario: 'auth/iss-supported', code: 0, output: 'Passed: 1/1', checks: PASSING }).why).toBe(
      "stale baseline entry: listed under client-exits-with-error, but Ward's client succeeded",
    );
  });

  it('test_a_check_that_must_pass_inside_an_expected_failure_fails_the_run_when_it_does_not', () => {
    const rejected = { id: 'localhost-host-rebinding-rejected', status: 'SUCCESS' };
    const accepted = { id: 'localhost-host-valid-accepted', status: 'FAILURE' };
    expect(verdict({ baseline: BASELINE, mode: 'server', scenario: 'dns-rebinding-protection', code: 0, output: '', checks: [rejected, accepted] }).why).toBeNull();
    expect(verdict({ baseline: BASELINE, mode: 'server', scenario: 'dns-rebinding-protection', code: 0, output: '', checks: [{ ...rejected, status: 'FAILURE' }, accepted] }).why).toBe(
      'check localhost-host-rebinding-rejected did not pass',
    );
  });

  it('test_every_entry_of_the_repository_baselines_comes_under_a_comment_saying_why', () => {
    for (const file of BASELINES) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      const unexplained = lines.filter((line, index) => {
        if (!/^\s+- /.test(line)) return false;
        let above = index - 1;
        while (above >= 0 && /^\s+- /.test(lines[above]!)) above -= 1;
        return !/^\s+#/.test(lines[above] ?? '');
      });
      expect({ file: path.basename(file), unexplained }).toEqual({ file: path.basename(file), unexplained: [] });
    }
  });

  it('test_no_scenario_is_listed_both_as_failing_and_as_exiting_with_an_error', () => {
    const text = fs.readFileSync(BASELINES[1]!, 'utf8');
    const exits = baselineEntries(text, 'client-exits-with-error');
    expect(exits.length).toBeGreaterThan(0);
    expect(baselineEntries(text, 'client').filter((entry) => exits.includes(entry))).toEqual([]);
  });
});
