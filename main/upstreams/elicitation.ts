/**
 * Elicitation (MCP 2025-11-25): an upstream server asks the person, during a tool call, to fill
 * in a form or to open a URL. This module reads the request into a bounded form Ward can show
 * (anything else is refused with the reason), and checks the person's answer against it, filling
 * in the defaults of fields left empty (SEP-1034). The model never sees any of it: the request
 * goes from the server to the person and the answer back, beside the tool call.
 */

export const MAX_FIELDS = 32;
export const MAX_MESSAGE_CHARS = 4_096;
const MAX_NAME_CHARS = 64;
const MAX_OPTIONS = 64;
const MAX_TEXT_CHARS = 4_096;
const MAX_URL_CHARS = 2_048;

interface FieldBase {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly required: boolean;
  /** Marked write-only or sensitive, or named like a secret: shown masked, never journaled. */
  readonly sensitive: boolean;
}

export interface EnumOption {
  readonly value: string;
  readonly label: string;
}

export type ElicitationField =
  | (FieldBase & { readonly kind: 'string'; readonly default?: string; readonly format?: 'email' | 'uri' | 'date' | 'date-time'; readonly minLength?: number; readonly maxLength?: number })
  | (FieldBase & { readonly kind: 'number'; readonly integer: boolean; readonly default?: number; readonly minimum?: number; readonly maximum?: number })
  | (FieldBase & { readonly kind: 'boolean'; readonly default?: boolean })
  | (FieldBase & { readonly kind: 'enum'; readonly options: readonly EnumOption[]; readonly default?: string })
  | (FieldBase & { readonly kind: 'multi'; readonly options: readonly EnumOption[]; readonly default?: readonly string[]; readonly minItems?: number; readonly maxItems?: number });

/**
 * `continuesCall`: the request came as a 2026-07-28 "input required" result; the call waits, and
 * the same call is sent once more carrying the answer (not a second call).
 */
export type ElicitationRequest =
  | { readonly mode: 'form'; readonly message: string; readonly fields: readonly ElicitationField[]; readonly continuesCall?: boolean }
  | { readonly mode: 'url'; readonly message: string; readonly url: URL; readonly elicitationId: string; readonly continuesCall?: boolean };

export type ElicitationValue = string | number | boolean | string[];
export type ElicitationContent = Readonly<Record<string, ElicitationValue>>;

/** The person's answer: accept (with the form's values), decline, or cancel (dismissed). */
export type ElicitationReply = { readonly action: 'accept'; readonly content?: ElicitationContent } | { readonly action: 'decline' | 'cancel' };

/** Who the session hands an elicitation to; absent, every request is declined. */
export interface Elicitor {
  ask(request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationReply>;
  /** A request Ward could not show, with why (for the journal); the server gets an error. */
  refused(reason: string): void;
}

/** A request Ward will not show; its message says why in Ward's words. */
export class ElicitationRefusal extends Error {
  override readonly name = 'ElicitationRefusal';
}

/** Like Ward's other secret-name check (main/permissions/run-permissions.ts looksLikeSecretName): cautious on purpose. */
const SECRET_NAME = /TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  return JSON.stringify(String(value).slice(0, 40));
}

function text(raw: unknown, what: string, max = MAX_TEXT_CHARS): string {
  if (raw === undefined) return '';
  if (typeof raw !== 'string') throw new ElicitationRefusal(`${what} is not text`);
  if (raw.length > max) throw new ElicitationRefusal(`${what} is longer than ${max} characters`);
  return raw;
}

function bound(raw: unknown, what: string): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'number' || !Number.isFinite(raw)) throw new ElicitationRefusal(`${what} is not a number`);
  return raw;
}

function options(raw: unknown, labels: unknown, what: string): EnumOption[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_OPTIONS) throw new ElicitationRefusal(`${what} must list 1 to ${MAX_OPTIONS} choices`);
  return raw.map((item, index) => {
    // Titled choices ({const, title}) and plain ones (a string, with an optional enumNames label).
    const value = isPlainObject(item) ? item.const : item;
    const label = isPlainObject(item) ? item.title : Array.isArray(labels) ? labels[index] : value;
    return { value: text(value, `a choice of ${what}`, 256), label: text(label ?? value, `a choice of ${what}`, 256) };
  });
}

function parseField(name: string, raw: unknown, required: boolean): ElicitationField {
  const what = `field ${shown(name)}`;
  if (!isPlainObject(raw)) throw new ElicitationRefusal(`${what} is not a schema`);
  const sensitive = raw.writeOnly === true || raw.format === 'password' || raw['x-sensitive'] === true || SECRET_NAME.test(name);
  const base = { name, title: text(raw.title, `the title of ${what}`, 256) || name, description: text(raw.description, `the description of ${what}`), required, sensitive };
  const fallback = raw.default;
  switch (raw.type) {
    case 'string': {
      if (raw.enum !== undefined || raw.oneOf !== undefined) {
        const choices = options(raw.enum ?? raw.oneOf, raw.enumNames, what);
        if (fallback !== undefined && !choices.some((choice) => choice.value === fallback)) throw new ElicitationRefusal(`the default of ${what} is not one of its choices`);
        return { ...base, kind: 'enum', options: choices, ...(fallback === undefined ? {} : { default: fallback as string }) };
      }
      const format = raw.format;
      if (format !== undefined && format !== 'password' && format !== 'email' && format !== 'uri' && format !== 'date' && format !== 'date-time') throw new ElicitationRefusal(`${what} has the unsupported format ${shown(format)}`);
      return {
        ...base,
        kind: 'string',
        ...(fallback === undefined ? {} : { default: text(fallback, `the default of ${what}`) }),
        ...(format === undefined || format === 'password' ? {} : { format }),
        ...(bound(raw.minLength, `the minLength of ${what}`) === undefined ? {} : { minLength: raw.minLength as number }),
        ...(bound(raw.maxLength, `the maxLength of ${what}`) === undefined ? {} : { maxLength: raw.maxLength as number }),
      };
    }
    case 'number':
    case 'integer': {
      const given = bound(fallback, `the default of ${what}`);
      return {
        ...base,
        kind: 'number',
        integer: raw.type === 'integer',
        ...(given === undefined ? {} : { default: given }),
        ...(bound(raw.minimum, `the minimum of ${what}`) === undefined ? {} : { minimum: raw.minimum as number }),
        ...(bound(raw.maximum, `the maximum of ${what}`) === undefined ? {} : { maximum: raw.maximum as number }),
      };
    }
    case 'boolean':
      if (fallback !== undefined && typeof fallback !== 'boolean') throw new ElicitationRefusal(`the default of ${what} is not true or false`);
      return { ...base, kind: 'boolean', ...(fallback === undefined ? {} : { default: fallback }) };
    case 'array': {
      const items = raw.items;
      if (!isPlainObject(items) || (items.enum === undefined && items.anyOf === undefined)) throw new ElicitationRefusal(`${what} is a list of something other than choices`);
      const choices = options(items.enum ?? items.anyOf, undefined, what);
      if (fallback !== undefined && (!Array.isArray(fallback) || !fallback.every((value) => choices.some((choice) => choice.value === value)))) {
        throw new ElicitationRefusal(`the default of ${what} is not a list of its choices`);
      }
      return {
        ...base,
        kind: 'multi',
        options: choices,
        ...(fallback === undefined ? {} : { default: fallback as string[] }),
        ...(bound(raw.minItems, `the minItems of ${what}`) === undefined ? {} : { minItems: raw.minItems as number }),
        ...(bound(raw.maxItems, `the maxItems of ${what}`) === undefined ? {} : { maxItems: raw.maxItems as number }),
      };
    }
    default:
      throw new ElicitationRefusal(`${what} has the unsupported type ${shown(raw.type)} (Ward shows text, numbers, true/false and choices)`);
  }
}

function parseUrl(raw: unknown): URL {
  const value = text(raw, 'the URL', MAX_URL_CHARS);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ElicitationRefusal('the URL is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ElicitationRefusal(`the URL is a ${shown(url.protocol)} link; only http and https open in the browser`);
  if (url.username !== '' || url.password !== '') throw new ElicitationRefusal('the URL carries a user name or password');
  return url;
}

/** Reads an `elicitation/create` request's params; anything Ward cannot show is an ElicitationRefusal. */
export function parseElicitation(params: unknown): ElicitationRequest {
  if (!isPlainObject(params)) throw new ElicitationRefusal('the request has no parameters');
  const message = text(params.message, 'the message', MAX_MESSAGE_CHARS);
  if (params.mode === 'url') {
    const elicitationId = text(params.elicitationId, 'the elicitation id', 256);
    if (elicitationId === '') throw new ElicitationRefusal('the request has no elicitation id');
    return { mode: 'url', message, url: parseUrl(params.url), elicitationId };
  }
  if (params.mode !== undefined && params.mode !== 'form') throw new ElicitationRefusal(`the mode ${shown(params.mode)} is not one Ward knows`);
  const schema = params.requestedSchema;
  const properties = isPlainObject(schema) && schema.type === 'object' ? schema.properties : undefined;
  if (!isPlainObject(schema) || !isPlainObject(properties)) throw new ElicitationRefusal('the requested schema is not an object with properties');
  const names = Object.keys(properties);
  if (names.length > MAX_FIELDS) throw new ElicitationRefusal(`the form has ${names.length} fields, more than ${MAX_FIELDS}`);
  const required = schema.required ?? [];
  if (!Array.isArray(required) || !required.every((name) => typeof name === 'string' && names.includes(name))) throw new ElicitationRefusal('the required fields are not fields of the form');
  const fields = names.map((name) => {
    if (name.length === 0 || name.length > MAX_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(name)) throw new ElicitationRefusal(`a field name is empty, longer than ${MAX_NAME_CHARS} characters or holds control characters`);
    return parseField(name, properties[name], required.includes(name));
  });
  return { mode: 'form', message, fields };
}

/** Why `value` does not fit `field`, or null when it does. */
function misfit(field: ElicitationField, value: unknown): string | null {
  switch (field.kind) {
    case 'string':
      if (typeof value !== 'string') return 'is not text';
      if (value.length > MAX_TEXT_CHARS || (field.maxLength !== undefined && value.length > field.maxLength)) return 'is too long';
      if (field.minLength !== undefined && value.length < field.minLength) return 'is too short';
      if (field.format === 'email' && !/^[^\s@]+@[^\s@]+$/.test(value)) return 'is not an email address';
      if (field.format === 'uri' && !URL.canParse(value)) return 'is not a URL';
      if (field.format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'is not a date (YYYY-MM-DD)';
      if (field.format === 'date-time' && Number.isNaN(Date.parse(value))) return 'is not a date and time';
      return null;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'is not a number';
      if (field.integer && !Number.isInteger(value)) return 'is not a whole number';
      if ((field.minimum !== undefined && value < field.minimum) || (field.maximum !== undefined && value > field.maximum)) return 'is out of range';
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? null : 'is not true or false';
    case 'enum':
      return typeof value === 'string' && field.options.some((option) => option.value === value) ? null : 'is not one of the choices';
    case 'multi':
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && field.options.some((option) => option.value === item))) return 'is not a list of the choices';
      if ((field.minItems !== undefined && value.length < field.minItems) || (field.maxItems !== undefined && value.length > field.maxItems)) return 'has too few or too many choices';
      return null;
  }
}

/**
 * The content sent back for an accepted form: every given value checked against its field, and
 * the default of each field left out (SEP-1034). Throws ElicitationRefusal naming the first
 * problem (the person is asked again or the answer is refused, never sent half-checked).
 */
export function completeContent(fields: readonly ElicitationField[], given: Readonly<Record<string, unknown>>): ElicitationContent {
  for (const name of Object.keys(given)) if (!fields.some((field) => field.name === name)) throw new ElicitationRefusal(`the form has no field ${shown(name)}`);
  const content: Record<string, ElicitationValue> = {};
  for (const field of fields) {
    const value = given[field.name] ?? field.default;
    if (value === undefined) {
      if (field.required) throw new ElicitationRefusal(`${field.title} is required`);
      continue;
    }
    const problem = misfit(field, value);
    if (problem !== null) throw new ElicitationRefusal(`${field.title} ${problem}`);
    content[field.name] = value as ElicitationValue;
  }
  return content;
}

/** The text values of sensitive fields: what Ward must redact wherever a server echoes them. */
export function sensitiveValues(fields: readonly ElicitationField[], content: ElicitationContent): string[] {
  const sensitive = new Set(fields.filter((field) => field.sensitive).map((field) => field.name));
  return Object.entries(content).flatMap(([name, value]) => (sensitive.has(name) && typeof value === 'string' ? [value] : []));
}

/** The content as it may be journaled: the values of sensitive fields replaced. */
export function redactedContent(fields: readonly ElicitationField[], content: ElicitationContent): Record<string, ElicitationValue> {
  const sensitive = new Set(fields.filter((field) => field.sensitive).map((field) => field.name));
  return Object.fromEntries(Object.entries(content).map(([name, value]) => [name, sensitive.has(name) ? '[redacted]' : value]));
}
