/**
 * Versions as the vulnerability index writes them (docs/vuln-matching.md, "Versions"): one
 * string per version, its update folded in so that the client's dpkg-order comparison orders a
 * release with its pre-releases and patches. The portal writes the index's versions with these
 * rules and `svc` reads a banner's version with the same ones, so both sides agree on the form.
 *
 * - A pre-release (alpha, beta, rc, pre, preview, dev, snapshot...) joins with `~`, which sorts
 *   before everything, the end of the string included: `2.10~rc1` < `2.10`.
 * - A patch update `p<n>` and a single letter join as they are, after the release:
 *   `9.3p1` > `9.3`, `1.0.1a` > `1.0.1` (OpenSSH's and OpenSSL's own spelling).
 * - `ga`, `final`, `release` and `stable` are the release itself; any other update joins with
 *   `+` (after the release and its patches): `sp1`, `update151`.
 */

/** Update words that name a pre-release: it sorts before the release it leads to. */
const PRE_RELEASE = 'alpha|beta|rc|cr|pre|preview|dev|snapshot|nightly|milestone|ea';
const PRE_RELEASE_UPDATE = new RegExp(`^(${PRE_RELEASE})[-_.]?(\\d.*)?$`);
/** A release's pre-release suffix in free text: `2.10.0-rc1`, `8.0.0rc1`, `1.0.0-beta.2`, `2.4.49-dev`. */
const PRE_RELEASE_SUFFIX = new RegExp(`^(\\d+(?:\\.\\d+)*)[-_.~]?(${PRE_RELEASE})[-_.]?(\\d[\\w.]*)?$`);
const RELEASE_UPDATE = /^(ga|final|release|stable)$/;

/** A version as the index orders it: lower case, a pre-release suffix joined with `~`. */
export function orderedVersion(text: string): string {
  const v = text.trim().toLowerCase();
  const m = PRE_RELEASE_SUFFIX.exec(v);
  return m === null ? v : `${m[1]}~${m[2]}${m[3] ?? ''}`;
}

/** A CPE's version joined with its update field (NVD writes OpenSSH 9.3p1 as `9.3` and `p1`). */
export function joinUpdate(version: string, update: string | undefined): string {
  const v = orderedVersion(version);
  const u = update?.trim().toLowerCase() ?? '';
  if (u === '' || u === '*' || u === '-' || RELEASE_UPDATE.test(u)) return v;
  const pre = PRE_RELEASE_UPDATE.exec(u);
  if (pre !== null) return `${v}~${pre[1]}${pre[2] ?? ''}`;
  if (/^p\d+$/.test(u) || /^[a-z]$/.test(u)) return `${v}${u}`;
  return `${v}+${u}`;
}

/**
 * The fields of a CPE 2.3 formatted string (`cpe:2.3:part:vendor:product:version:update:…`,
 * NVD) or a CPE 2.2 URI (`cpe:/part:vendor:product:version:update`, nmap), from `part` on, with
 * CPE 2.3's backslash escapes undone (`1.0\-rc1` is `1.0-rc1`; `\:` is not a separator). Null
 * when the text is neither.
 */
export function cpeFields(cpe: string): string[] | null {
  let rest: string;
  if (cpe.startsWith('cpe:2.3:')) rest = cpe.slice(8);
  else if (cpe.startsWith('cpe:/')) rest = cpe.slice(5);
  else return null;
  const fields: string[] = [];
  let field = '';
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i] as string;
    if (c === '\\' && i + 1 < rest.length) field += rest[++i];
    else if (c === ':') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field);
  return /^[aoh]$/.test(fields[0] ?? '') ? fields : null;
}

/**
 * What a CPE says of the version (NISTIR 7696): `*` (or nothing) is ANY, every version; `-` is
 * NOT APPLICABLE, which no version value matches; otherwise one version, its update folded in.
 */
export type CpeVersionField = { kind: 'any' } | { kind: 'not_applicable' } | { kind: 'value'; version: string };

export function cpeVersionField(cpe: string): CpeVersionField | null {
  const fields = cpeFields(cpe);
  if (fields === null) return null;
  const version = fields[3] ?? '';
  if (version === '' || version === '*') return { kind: 'any' };
  if (version === '-') return { kind: 'not_applicable' };
  return { kind: 'value', version: joinUpdate(version, fields[4]) };
}

/** The one version a CPE names (update folded in, see joinUpdate), or null for ANY, NOT APPLICABLE or no CPE. */
export function cpeVersion(cpe: string): string | null {
  const field = cpeVersionField(cpe);
  return field?.kind === 'value' ? field.version : null;
}
