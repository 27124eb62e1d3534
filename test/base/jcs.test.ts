/** RFC 8785 (JCS), checked against the RFC's own examples, and the event hash against the encoding journals were written with. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../main/base/jcs.js';
import { hashEvent } from '../../main/store/chain.js';

/** RFC 8785 Appendix B: IEEE 754 doubles (hex) and their canonical text. */
const APPENDIX_B: ReadonlyArray<readonly [string, string]> = [
  ['0000000000000000', '0'],
  ['8000000000000000', '0'],
  ['0000000000000001', '5e-324'],
  ['8000000000000001', '-5e-324'],
  ['7fefffffffffffff', '1.7976931348623157e+308'],
  ['ffefffffffffffff', '-1.7976931348623157e+308'],
  ['4340000000000000', '9007199254740992'],
  ['c340000000000000', '-9007199254740992'],
  ['4430000000000000', '295147905179352830000'],
  ['44b52d02c7e14af5', '9.999999999999997e+22'],
  ['44b52d02c7e14af6', '1e+23'],
  ['44b52d02c7e14af7', '1.0000000000000001e+23'],
  ['444b1ae4d6e2ef4e', '999999999999999700000'],
  ['444b1ae4d6e2ef4f', '999999999999999900000'],
  ['444b1ae4d6e2ef50', '1e+21'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
  ['3eb0c6f7a0b5ed8d', '0.000001'],
  ['41b3de4355555553', '333333333.3333332'],
  ['41b3de4355555554', '333333333.33333325'],
  ['41b3de4355555555', '333333333.3333333'],
  ['41b3de4355555556', '333333333.3333334'],
  ['41b3de4355555557', '333333333.33333343'],
  ['becbf647612f3696', '-0.0000033333333333333333'],
  ['43143ff3c1cb0959', '1424953923781206.2'],
];

const double = (hex: string): number => Buffer.from(hex, 'hex').readDoubleBE(0);

describe('RFC 8785 canonical JSON', () => {
  it('test_numbers_serialize_as_appendix_b_says_and_nan_and_infinity_are_refused', () => {
    for (const [hex, text] of APPENDIX_B) expect(canonicalize(double(hex)), hex).toBe(text);
    expect(() => canonicalize(double('7fffffffffffffff'))).toThrow(/NaN is not a JSON number/);
    expect(() => canonicalize(double('7ff0000000000000'))).toThrow(/Infinity is not a JSON number/);
  });

  it('test_the_section_3_2_4_example_canonicalizes_to_the_rfcs_bytes', () => {
    const input = JSON.parse('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}');
    const expected = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
    expect(canonicalize(input)).toBe(expected);
    // The RFC gives the UTF-8 of the output in hex (3.2.4); its start and its euro sign.
    expect(Buffer.from(canonicalize(input), 'utf8').subarray(0, 12).toString('hex')).toBe('7b226c69746572616c73223a');
    expect(Buffer.from(canonicalize(input), 'utf8').toString('hex')).toContain('e282ac24');
  });

  it('test_properties_sort_by_utf16_code_units_as_section_3_2_3_orders_them', () => {
    const input = JSON.parse('{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}');
    expect(canonicalize(input).match(/"[^"]*"(?=[,}])/g)).toEqual(['"Carriage Return"', '"One"', '"Control"', '"Latin Small Letter O With Diaeresis"', '"Euro Sign"', '"Emoji: Grinning Face"', '"Hebrew Letter Dalet With Dagesh"']);
    // Nested objects are sorted too, arrays keep their order, undefined members are left out as JSON.stringify does.
    expect(canonicalize({ b: [3, { z: 1, a: 2 }], a: undefined, c: 'x' })).toBe('{"b":[3,{"a":2,"z":1}],"c":"x"}');
  });

  it('test_lone_surrogates_and_values_json_has_no_form_for_are_refused', () => {
    expect(() => canonicalize('\ud800')).toThrow(/lone surrogate/);
    expect(() => canonicalize({ ['\udc00']: 1 })).toThrow(/lone surrogate/);
    expect(canonicalize('\ud83d\ude00')).toBe('"\ud83d\ude00"');
    expect(() => canonicalize(() => 1)).toThrow(/function has no JSON form/);
    expect(() => canonicalize(10n)).toThrow(/bigint has no JSON form/);
    // Inside arrays too (their fast path hands JSON.stringify only what it writes as JCS does).
    expect(() => canonicalize(['ok', '\ud800'])).toThrow(/lone surrogate/);
    expect(() => canonicalize([1, Number.NaN])).toThrow(/NaN is not a JSON number/);
    expect(() => canonicalize([undefined])).toThrow(/undefined has no JSON form/);
    expect(canonicalize([-0, 1e21, 'é', null, true, [{ b: 1, a: [2] }]])).toBe('[0,1e+21,"é",null,true,[{"a":[2],"b":1}]]');
  });
});

describe('the event hash is JCS', () => {
  it('test_an_event_hashes_as_sha256_of_the_previous_hash_a_newline_and_the_jcs_array_including_every_escape', () => {
    const payload = JSON.stringify({ text: 'déjà vu \u0001 "quoted" \\ \u2028 😀 日本語', lone: '\ud800' });
    const fields = ['0b7c1e7a-1c8a-4f7e-9d55-2a0f6c2d9b11', 7, null, 'assistant_text', payload, '2026-12-01T21:00:00.000Z'] as const;
    const prev = 'a'.repeat(64);
    const expected = createHash('sha256').update(`${prev}\n${canonicalize([...fields])}`).digest('hex');
    expect(hashEvent(prev, ...fields)).toBe(expected);
    // A journal hashed before JCS was named (JSON.stringify of the array) hashes the same: no migration.
    expect(createHash('sha256').update(`${prev}\n${JSON.stringify(fields)}`).digest('hex')).toBe(expected);
  });
});
