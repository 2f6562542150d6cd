const LABEL = /^[a-z0-9_](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * The DNS names of `--domains` (comma separated), lower-cased, each checked as a name of at least
 * two labels, so that nothing else (an option, a path, DNS tool syntax) reaches a tool's argv.
 */
export function parseDomains(input: string): string[] {
  const names = input.split(',').map((d) => d.replace(/\.$/, ''));
  for (const name of names) {
    const labels = name.split('.');
    if (name.length === 0 || name.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l)))
      throw new Error(`--domains: "${name}" is not a DNS name (e.g. example.com)`);
  }
  return [...new Set(names.map((n) => n.toLowerCase()))];
}
