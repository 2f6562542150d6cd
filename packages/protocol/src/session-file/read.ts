/**
 * Lenient reading of a parsed session file (docs/api.md#compatibility: older formats are always
 * accepted). A value of the wrong type counts as absent; so does a blank string or one no
 * store can keep as text: a NUL character or an unpaired UTF-16 surrogate (PostgreSQL
 * refuses both, and neither survives a UTF-8 round trip). Numbers must be finite.
 */

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const storable = (v: string): boolean => !v.includes('\u0000') && v.isWellFormed();
export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' && storable(v) ? v : null);
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const objs = (v: unknown): Obj[] => arr(v).filter(isObj);
