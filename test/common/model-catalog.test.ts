/** Ward shows a cost only for models the pinned CLI has prices for; for any other, the CLI's cost is a default tier's guess. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_CATALOG_MODELS, cliPricesModel } from '../../common/model-catalog.js';
import { locatePlatformBinary } from '../../main/runner/pin.js';

describe('the models the pinned CLI has prices for', () => {
  it('test_the_catalog_ward_prices_from_is_the_one_inside_the_pinned_cli_binary', () => {
    const binary = fs.readFileSync(locatePlatformBinary().binary);
    // The CLI's CATALOG_MODEL_IDS: a sorted array literal of catalog ids, first the oldest.
    const start = binary.indexOf('["claude-3-5-haiku","claude-3-5-sonnet"');
    expect(start, 'the pinned CLI has no catalog id list where Ward looks: read the new CLI and update common/model-catalog.ts').toBeGreaterThan(0);
    const list = JSON.parse(binary.subarray(start, binary.indexOf(']', start) + 1).toString('utf8')) as string[];
    expect(CLI_CATALOG_MODELS).toEqual(list);
  });

  it('test_catalog_models_their_snapshots_provider_spellings_and_aliases_are_priced_and_nothing_else', () => {
    for (const model of ['claude-sonnet-4-5', 'claude-opus-4-5-20251101', 'claude-opus-4-20250514', 'sonnet', 'opus[1m]', 'us.anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-opus-4.5', 'claude-sonnet-4-5@20250929']) {
      expect(cliPricesModel(model), model).toBe(true);
    }
    for (const model of ['my-corp-model', 'claude-test', 'claude-opus-4-9', 'claude-sonnet-4-5-mine', 'gpt-4o', 'claude', '']) {
      expect(cliPricesModel(model), model).toBe(false);
    }
  });
});
