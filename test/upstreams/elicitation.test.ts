import { describe, expect, it } from 'vitest';
import { completeContent, ElicitationRefusal, parseElicitation, redactedContent, type ElicitationRequest } from '../../main/upstreams/elicitation.js';

const FORM = {
  message: 'Tell us who you are',
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name', default: 'John Doe' },
      age: { type: 'integer', default: 30, minimum: 0 },
      score: { type: 'number', default: 95.5 },
      status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
      color: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }] },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, default: ['a'] },
      verified: { type: 'boolean', default: true },
      email: { type: 'string', format: 'email' },
      api_token: { type: 'string' },
      pin: { type: 'string', writeOnly: true },
    },
    required: ['email'],
  },
};

function form(): Extract<ElicitationRequest, { mode: 'form' }> {
  const request = parseElicitation(FORM);
  if (request.mode !== 'form') throw new Error('expected a form');
  return request;
}

function refusalOf(params: unknown): string {
  try {
    parseElicitation(params);
  } catch (error) {
    if (error instanceof ElicitationRefusal) return error.message;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('elicitation requests (MCP 2025-11-25)', () => {
  it('test_reads_text_numbers_booleans_single_and_multiple_choices_with_defaults_and_marks_secrets_sensitive', () => {
    const { fields, message } = form();
    expect(message).toBe('Tell us who you are');
    expect(fields.map((field) => [field.name, field.kind, field.required, field.sensitive])).toEqual([
      ['name', 'string', false, false],
      ['age', 'number', false, false],
      ['score', 'number', false, false],
      ['status', 'enum', false, false],
      ['color', 'enum', false, false],
      ['tags', 'multi', false, false],
      ['verified', 'boolean', false, false],
      ['email', 'string', true, false],
      ['api_token', 'string', false, true],
      ['pin', 'string', false, true],
    ]);
    expect(fields.find((field) => field.name === 'color')).toMatchObject({ options: [{ value: 'r', label: 'Red' }, { value: 'g', label: 'Green' }] });
  });

  it('test_fills_in_the_defaults_of_fields_left_out_sep_1034_and_checks_what_was_given', () => {
    const { fields } = form();
    expect(completeContent(fields, { email: 'ada@example.com' })).toEqual({ name: 'John Doe', age: 30, score: 95.5, status: 'active', tags: ['a'], verified: true, email: 'ada@example.com' });
    const problem = (given: Record<string, unknown>) => {
      try {
        completeContent(fields, given);
        return null;
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problem({})).toBe('email is required');
    expect(problem({ email: 'not an address' })).toBe('email is not an email address');
    expect(problem({ email: 'a@b.c', age: 1.5 })).toBe('age is not a whole number');
    expect(problem({ email: 'a@b.c', age: -1 })).toBe('age is out of range');
    expect(problem({ email: 'a@b.c', status: 'gone' })).toBe('status is not one of the choices');
    expect(problem({ email: 'a@b.c', tags: ['a', 'z'] })).toBe('tags is not a list of the choices');
    expect(problem({ email: 'a@b.c', other: 1 })).toBe('the form has no field "other"');
  });

  it('test_journals_an_answer_with_the_values_of_sensitive_fields_replaced', () => {
    const { fields } = form();
    const content = completeContent(fields, { email: 'a@b.c', api_token: 'tok-canary-1', pin: '1234' });
    expect(redactedContent(fields, content)).toMatchObject({ email: 'a@b.c', api_token: '[redacted]', pin: '[redacted]', name: 'John Doe' });
  });

  it('test_refuses_unsupported_types_a_thousand_fields_and_links_that_are_not_http_naming_why', () => {
    expect(refusalOf({ message: 'm', requestedSchema: { type: 'object', properties: { nested: { type: 'object' } } } })).toBe(
      'field "nested" has the unsupported type "object" (Ward shows text, numbers, true/false and choices)',
    );
    const many = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, { type: 'string' }]));
    expect(refusalOf({ message: 'm', requestedSchema: { type: 'object', properties: many } })).toBe('the form has 1000 fields, more than 32');
    expect(refusalOf({ message: 'x'.repeat(5000), requestedSchema: { type: 'object', properties: {} } })).toBe('the message is longer than 4096 characters');
    expect(refusalOf({ message: 'm', requestedSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] } })).toBe('the required fields are not fields of the form');
    expect(refusalOf({ mode: 'url', message: 'm', elicitationId: 'e', url: 'javascript:alert(1)' })).toMatch(/only http and https open in the browser/);
    expect(refusalOf({ mode: 'url', message: 'm', elicitationId: 'e', url: 'https://user:pw@example.com/' })).toBe('the URL carries a user name or password');
    expect(refusalOf({ mode: 'sampling', message: 'm' })).toBe('the mode "sampling" is not one Ward knows');
  });

  it('test_reads_a_url_request', () => {
    expect(parseElicitation({ mode: 'url', message: 'Connect your account', elicitationId: 'e-1', url: 'https://example.com/connect?code=1' })).toEqual({
      mode: 'url',
      message: 'Connect your account',
      elicitationId: 'e-1',
      url: new URL('https://example.com/connect?code=1'),
    });
  });
});
