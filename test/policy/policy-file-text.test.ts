import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPolicy } from '../../main/policy/policy.js';
import { tempDir } from '../support/temp.js';

/** The file WARD_POLICY names, written byte for byte. */
function readText(text: string) {
  const file = path.join(tempDir('ward-policy-text-'), 'policy.json');
  fs.writeFileSync(file, text);
  return { file, reading: readPolicy({ WARD_POLICY: file }, 'linux', {}) };
}

describe('a policy file as text', () => {
  it('test_a_leading_utf8_byte_order_mark_is_accepted', () => {
    const { reading } = readText('\uFEFF{"forbid": ["run"]}');
    expect(reading.errors).toEqual([]);
    expect(reading.settings.get('forbid')?.value).toEqual(['run']);
  });

  it('test_a_key_written_twice_is_refused_naming_the_key_and_where_at_any_depth', () => {
    // Before: the last "forbid" silently won, so a reviewer reading the first was misled.
    const top = readText('{"forbid": ["run"], "reason": "IT", "forbid": []}');
    expect(top.reading.errors).toEqual([`${top.file}: has the key "forbid" twice in the top-level object; each key may appear once`]);
    const nested = readText('{"caps": {"net": ["a.example.com"], "read": ["/srv"], "n\\u0065t": ["*.example.com"]}}');
    expect(nested.reading.errors).toEqual([`${nested.file}: has the key "net" twice in "caps"; each key may appear once`]);
    const inList = readText('{"managedConnections": [{"name": "a", "url": "https://a.example/mcp", "name": "b"}]}');
    expect(inList.reading.errors).toEqual([`${inList.file}: has the key "name" twice in "managedConnections[]"; each key may appear once`]);
    // The same key in two different objects, or a key's name inside a string value, is fine.
    expect(readText('{"reason": "forbid: \\"forbid\\":", "recommended": {"sandbox": "auto"}, "sandbox": "require"}').reading.errors).toEqual([]);
  });
});
