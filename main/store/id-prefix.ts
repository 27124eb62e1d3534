import type { Database } from 'better-sqlite3';
import { WardError } from '../base/errors.js';

/** How many leading characters of an id a hint prints: the shortest prefix the resolver takes. */
export const SHORT_ID_CHARS = 8;

/**
 * The one row whose UUID `id` is `idOrPrefix` or starts with it (8 characters or more), so a
 * person can type what `ward` prints in short. `what` names the thing in refusals ("run").
 */
export function rowByIdPrefix<Row>(db: Database, table: 'conversations' | 'runs', columns: string, what: string, idOrPrefix: string): Row {
  if (!/^[0-9a-f-]{8,36}$/.test(idOrPrefix)) throw new WardError('not_found', `no ${what} ${JSON.stringify(idOrPrefix.slice(0, 40))} in this namespace (give its id or 8 or more of its first characters)`);
  const rows = db.prepare<[string], Row>(`SELECT ${columns} FROM ${table} WHERE id LIKE ? || '%' LIMIT 2`).all(idOrPrefix);
  if (rows.length === 0) throw new WardError('not_found', `no ${what} ${idOrPrefix} in this namespace`);
  if (rows.length > 1) throw new WardError('usage', `${what} prefix ${idOrPrefix} is ambiguous; give more characters`);
  return rows[0]!;
}
