/**
 * How a policy key's value is written down where it is not JSON: its JSON Schema (the templates)
 * and its shape in stores without nested values (the Windows registry, ADMX).
 */
import { z } from 'zod';
import type { PolicyKey } from './schema.js';

/** A value's JSON Schema, for the templates and for how the registry stores it. */
export type JsonSchema = {
  type?: string;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  maxLength?: number;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  [key: string]: unknown;
};

export function valueJsonSchema(key: PolicyKey): JsonSchema {
  const { $schema: _, ...schema } = z.toJSONSchema(key.schema, { target: 'draft-2020-12' }) as JsonSchema;
  return { ...schema, description: key.description };
}

/**
 * How a key is stored where the store has no nested values (the Windows registry, ADMX):
 * boolean and integer as REG_DWORD, text and choices as REG_SZ, a list as a subkey of numbered
 * values (or one REG_MULTI_SZ), lists by kind as one such subkey per kind, anything else as JSON text.
 */
export type StorageShape =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'integer'; readonly min: number; readonly max: number }
  | { readonly kind: 'choice'; readonly values: readonly string[] }
  | { readonly kind: 'text'; readonly maxLength: number }
  | { readonly kind: 'list' }
  | { readonly kind: 'listsByName'; readonly names: readonly string[] }
  | { readonly kind: 'json' };

/** A text value without its own limit (an ADMX text box's default). */
const MAX_TEXT_CHARS = 1024;

export function storageShape(key: PolicyKey): StorageShape {
  const schema = valueJsonSchema(key);
  if (schema.type === 'boolean') return { kind: 'boolean' };
  if (schema.type === 'integer') return { kind: 'integer', min: schema.minimum ?? 0, max: schema.maximum ?? 0xffffffff };
  if (schema.type === 'string' && (schema.enum !== undefined || schema.const !== undefined)) return { kind: 'choice', values: (schema.enum ?? [schema.const]) as string[] };
  if (schema.type === 'string') return { kind: 'text', maxLength: schema.maxLength ?? MAX_TEXT_CHARS };
  if (schema.type === 'array' && schema.items?.type === 'string') return { kind: 'list' };
  const lists = Object.entries(schema.properties ?? {});
  if (schema.type === 'object' && lists.length > 0 && lists.every(([, list]) => list.type === 'array' && list.items?.type === 'string')) {
    return { kind: 'listsByName', names: lists.map(([name]) => name) };
  }
  return { kind: 'json' };
}
