/**
 * Version ordering as dpkg defines it (deb-version(7)): non-digit runs compare by character with
 * letters before non-letters and `~` before everything (even the end), digit runs numerically.
 * Upstream versions such as OpenSSH's `9.2p1` or Redis's `7.0.15` order correctly with it.
 */

function order(c: string | undefined): number {
  if (c === undefined) return 0;
  if (c === '~') return -1;
  if (/[0-9]/.test(c)) return 0;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

/** Negative when a < b, zero when equal, positive when a > b. */
export function compareVersions(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let diff = 0;
    while ((i < a.length && !/[0-9]/.test(a[i] ?? '')) || (j < b.length && !/[0-9]/.test(b[j] ?? ''))) {
      const ac = i < a.length && !/[0-9]/.test(a[i] ?? '') ? a[i] : undefined;
      const bc = j < b.length && !/[0-9]/.test(b[j] ?? '') ? b[j] : undefined;
      diff = order(ac) - order(bc);
      if (diff !== 0) return diff;
      i++;
      j++;
    }
    let an = '';
    let bn = '';
    while (i < a.length && /[0-9]/.test(a[i] ?? '')) an += a[i++];
    while (j < b.length && /[0-9]/.test(b[j] ?? '')) bn += b[j++];
    const na = BigInt(an === '' ? '0' : an);
    const nb = BigInt(bn === '' ? '0' : bn);
    if (na !== nb) return na < nb ? -1 : 1;
  }
  return 0;
}

/** A Debian package version `[epoch:]upstream[-revision]` split into its parts. */
export function splitDebianVersion(v: string): { epoch: number; upstream: string; revision: string } {
  const colon = v.indexOf(':');
  const epoch = colon === -1 ? 0 : Number(v.slice(0, colon));
  const rest = colon === -1 ? v : v.slice(colon + 1);
  const dash = rest.lastIndexOf('-');
  return {
    epoch: Number.isFinite(epoch) ? epoch : 0,
    upstream: dash === -1 ? rest : rest.slice(0, dash),
    revision: dash === -1 ? '' : rest.slice(dash + 1),
  };
}
