import { DomainError } from '../domain/errors.ts';

/** Parsing shared by the findings listings (GET /api/findings and a session's findings). */

export const badFindingsQuery = (message: string) => new DomainError('invalid.findings_query', message);

/** A comma-separated list of allowed values (case-insensitive, deduplicated), or undefined when absent. */
export function listOf<T extends string>(
  param: string,
  value: string | undefined,
  allowed: readonly T[],
): T[] | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(',').map((p) => p.trim().toLowerCase());
  for (const p of parts)
    if (!(allowed as readonly string[]).includes(p))
      throw badFindingsQuery(`Invalid ${param} parameter ${JSON.stringify(p)}: must be one of ${allowed.join(', ')}`);
  return [...new Set(parts)] as T[];
}
