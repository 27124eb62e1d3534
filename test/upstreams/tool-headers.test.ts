import { describe, expect, it } from 'vitest';
import { invalidHeaderDeclaration } from '../../main/upstreams/tool-headers.js';

const property = (schema: Record<string, unknown>): Record<string, unknown> => ({ type: 'object', properties: { value: schema } });

describe('x-mcp-header declarations (SEP-2243)', () => {
  it('test_accepts_a_token_on_a_string_integer_or_boolean_property_reached_through_properties', () => {
    expect(invalidHeaderDeclaration({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'N' }, on: { type: 'boolean', 'x-mcp-header': 'On' } } })).toBeUndefined();
    expect(invalidHeaderDeclaration({ type: 'object', properties: { outer: { type: 'object', properties: { inner: { type: 'string', 'x-mcp-header': 'Inner' } } } } })).toBeUndefined();
    expect(invalidHeaderDeclaration({ type: 'object' })).toBeUndefined();
  });

  it('test_names_what_is_wrong_with_an_empty_non_token_non_primitive_duplicate_or_unreachable_declaration', () => {
    expect(invalidHeaderDeclaration(property({ type: 'string', 'x-mcp-header': '' }))).toMatch(/non-empty HTTP token/);
    for (const name of ['My Region', 'Region:Primary', 'Région', 'Region\t1']) expect(invalidHeaderDeclaration(property({ type: 'string', 'x-mcp-header': name }))).toMatch(/non-empty HTTP token/);
    for (const type of ['number', 'object', 'array', 'null']) expect(invalidHeaderDeclaration(property({ type, 'x-mcp-header': 'V' }))).toMatch(/string, integer or boolean/);
    expect(invalidHeaderDeclaration({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } } })).toMatch(/declared twice/);
    expect(invalidHeaderDeclaration({ type: 'object', properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } } })).toMatch(/reached through "properties"/);
    expect(invalidHeaderDeclaration({ type: 'object', $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } })).toMatch(/reached through "properties"/);
    expect(invalidHeaderDeclaration({ type: 'object', 'x-mcp-header': 'Root' })).toMatch(/reached through "properties"/);
  });
});
