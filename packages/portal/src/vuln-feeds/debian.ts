import type { Readable } from 'node:stream';
import { CVE_ID, summaryOf } from './nvd.ts';
import { feedBytes, feedRefused, MAX_FEED_BYTES } from './input.ts';
import { jsonItems } from './json-stream.ts';

/**
 * The Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json):
 * `{<source package>: {<CVE id or TEMP id>: {description?, scope?, debianbug?, releases:
 * {<release>: {status, fixed_version?, urgency, repositories: {<suite>: <version>}, nodsa?}}}}}`.
 * One package at a time is read (memory holds one package, whatever the file's size).
 */

/** The tracker's statement on one CVE in one release of a package. */
export interface DebianStatement {
  cve_id: string;
  release: string;
  /** The version that fixed it (`"0"`: never affected); null while open. */
  fixed_version: string | null;
  /** The tracker's urgency is "unimportant": no fix planned, not a security problem in that release. */
  unimportant: boolean;
}

/** What the index keeps of one source package. */
export interface DebianPackageRecord {
  package: string;
  /** Release → the versions its suites hold (`bookworm` and `bookworm-security` under bookworm). */
  releases: Record<string, string[]>;
  statements: DebianStatement[];
  /** CVE id → the tracker's description, for CVEs NVD has no summary of. */
  descriptions: Record<string, string>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const NOT_TRACKER = "not the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)";

/** A release's statement: resolved with a fixed version, or open; undetermined says nothing. */
function statementOf(cve: string, release: string, value: unknown): DebianStatement | null {
  if (!isObj(value)) return null;
  const unimportant = value['urgency'] === 'unimportant';
  if (value['status'] === 'resolved' && typeof value['fixed_version'] === 'string' && value['fixed_version'] !== '')
    return { cve_id: cve, release, fixed_version: value['fixed_version'], unimportant };
  if (value['status'] === 'open') return { cve_id: cve, release, fixed_version: null, unimportant };
  return null;
}

function packageOf(name: string, value: unknown, label: string): DebianPackageRecord {
  if (!isObj(value)) throw feedRefused(label, `"${name.slice(0, 60)}" is not a package's CVE entries: ${NOT_TRACKER}`);
  const releases = new Map<string, Set<string>>();
  const statements: DebianStatement[] = [];
  const descriptions: Record<string, string> = {};
  for (const [id, entry] of Object.entries(value)) {
    if (!isObj(entry) || !('releases' in entry))
      throw feedRefused(label, `"${name.slice(0, 60)}"."${id.slice(0, 40)}" has no "releases": ${NOT_TRACKER}`);
    // TEMP-… ids are issues without a CVE yet: nothing a finding names.
    if (!CVE_ID.test(id)) continue;
    // The tracker writes an empty list, not an object, for an entry without releases.
    const byRelease = isObj(entry['releases']) ? entry['releases'] : {};
    for (const [release, about] of Object.entries(byRelease)) {
      const statement = statementOf(id, release, about);
      if (statement !== null) statements.push(statement);
      const suites = isObj(about) && isObj(about['repositories']) ? about['repositories'] : {};
      for (const [suite, version] of Object.entries(suites)) {
        if (typeof version !== 'string' || version === '') continue;
        // bookworm-security and bookworm-backports... are suites of bookworm.
        const of = suite.split('-')[0] as string;
        const held = releases.get(of) ?? new Set<string>();
        held.add(version);
        releases.set(of, held);
      }
    }
    if (typeof entry['description'] === 'string' && entry['description'] !== '')
      descriptions[id] = summaryOf(entry['description']);
  }
  return {
    package: name,
    releases: Object.fromEntries([...releases].map(([r, held]) => [r, [...held].sort()])),
    statements,
    descriptions,
  };
}

/** The packages of one tracker file, one at a time; anything else is refused with the file's name. */
export async function* debianPackages(source: Readable, label: string): AsyncGenerator<DebianPackageRecord> {
  let packages = 0;
  const bytes = feedBytes(source, label, MAX_FEED_BYTES.debian);
  for await (const { path, value } of jsonItems(bytes, label, ['*'])) {
    packages++;
    yield packageOf(path, value, label);
  }
  if (packages === 0) throw feedRefused(label, `no package in the file: ${NOT_TRACKER}`);
}
