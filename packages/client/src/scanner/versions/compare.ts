/**
 * Version ordering as dpkg defines it (deb-version(7)): non-digit runs compare by character with
 * letters before non-letters and `~` before everything (even the end), digit runs numerically.
 * Upstream versions such as OpenSSH's `9.2p1` or Redis's `7.0.15` order correctly with it.
 */

function order(c: string | undefined): number {
  if (c === undefined) return 0;
  if (c === '~') return -1;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

/**
 * A version split once into its runs, for comparing many times (the vulnerability index's
 * bounds): non-digit runs at even positions, digit runs without leading zeros at odd ones.
 */
export type VersionKey = readonly string[];

const isDigit = (code: number) => code >= 48 && code <= 57;

export function versionKey(v: string): VersionKey {
  const out: string[] = [];
  let i = 0;
  while (i < v.length) {
    const start = i;
    while (i < v.length && !isDigit(v.charCodeAt(i))) i++;
    out.push(v.slice(start, i));
    let digits = i;
    while (i < v.length && isDigit(v.charCodeAt(i))) i++;
    while (digits < i - 1 && v.charCodeAt(digits) === 48) digits++;
    out.push(v.slice(digits, i));
  }
  return out;
}

const isZero = (run: string | undefined) => run === '' || run === '0';

/**
 * The key the vulnerability index's versions compare by: versionKey with the trailing zero
 * components of the leading release number dropped, so that NVD's `2.10` and TensorFlow's
 * `2.10.0` (or `2.10~rc1` and `2.10.0~rc1`) are one version. Only the upstream versions of the
 * index compare so; Debian versions keep dpkg's order exactly.
 */
export function releaseKey(v: string): VersionKey {
  const key = versionKey(v);
  if (key[0] !== '') return key;
  // The release number's components: key[1], then key[k + 1] after each "." separator key[k].
  let end = 2;
  while (end + 1 < key.length && key[end] === '.') end += 2;
  let cut = end;
  while (cut > 2 && key[cut - 2] === '.' && isZero(key[cut - 1])) cut -= 2;
  return cut === end ? key : [...key.slice(0, cut), ...key.slice(end)];
}

/** compareVersions of two keys: a missing run is empty, a missing number 0. */
export function compareVersionKeys(a: VersionKey, b: VersionKey): number {
  const n = Math.max(a.length, b.length);
  for (let k = 0; k < n; k += 2) {
    const x = a[k] ?? '';
    const y = b[k] ?? '';
    if (x !== y) {
      const m = Math.max(x.length, y.length);
      for (let c = 0; c < m; c++) {
        const diff = order(x[c]) - order(y[c]);
        if (diff !== 0) return diff;
      }
    }
    const p = a[k + 1] ?? '';
    const q = b[k + 1] ?? '';
    if (p !== q) {
      // Without leading zeros the longer number is the larger; "" and "0" are both zero.
      const pn = p === '0' ? '' : p;
      const qn = q === '0' ? '' : q;
      if (pn.length !== qn.length) return pn.length < qn.length ? -1 : 1;
      if (pn !== qn) return pn < qn ? -1 : 1;
    }
  }
  return 0;
}

/** Negative when a < b, zero when equal, positive when a > b. */
export function compareVersions(a: string, b: string): number {
  return compareVersionKeys(versionKey(a), versionKey(b));
}

/**
 * Whether a Debian package seen as `upstream-revision` (a banner shows no epoch: the fixed
 * version's is taken) is at or past the `fixed` version of the security tracker, in dpkg's order
 * (epoch, then upstream, then revision). The tracker's `0` means no version was ever affected.
 */
export function debianAtLeast(upstream: string, revision: string, fixed: string): boolean {
  if (fixed === '0') return true;
  const f = splitDebianVersion(fixed);
  const u = compareVersions(upstream, f.upstream);
  if (u !== 0) return u > 0;
  return compareVersions(revision, f.revision) >= 0;
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
