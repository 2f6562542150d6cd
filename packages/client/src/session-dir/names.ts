/**
 * The `<name>` of `report_<name>.html` and `exec_summary_<name>.html`: a slug of the client's
 * name when the run has one, else of the target, so a consultant's files say whose they are.
 * Only [a-z0-9_-] survive (every other run of characters becomes one `_`), at most 64
 * characters, never empty: a name can hold no path separator, dot or control character.
 */

export const NAME_MAX = 64;
export const FALLBACK_NAME = 'session';

export function slugName(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '')
    .slice(0, NAME_MAX)
    .replace(/[_-]+$/, '');
  return slug === '' ? FALLBACK_NAME : slug;
}

/** The name a session's HTML files carry: the client's name when set, else the target. */
export function reportNameOf(metadata: { client?: unknown; target?: unknown } | undefined): string {
  const client = typeof metadata?.client === 'string' ? metadata.client.trim() : '';
  const target = typeof metadata?.target === 'string' ? metadata.target.trim() : '';
  return slugName(client !== '' ? client : target);
}

export const reportFileName = (name: string) => `report_${slugName(name)}.html`;
export const execSummaryFileName = (name: string) => `exec_summary_${slugName(name)}.html`;
