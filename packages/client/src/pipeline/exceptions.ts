import { isFingerprint, lenient } from '@svc/protocol';
import type { Remediation } from './types.ts';

/**
 * Risk exceptions from the exceptions file (docs/scanner/stages.md), applied to the open
 * remediation items. The file is JSON:
 *
 *   {"exceptions": [{"fingerprint": "<64 hex>" | "title": "...", "host": "optional",
 *     "reason": "...", "approver": "...", "approved_at": "ISO 8601", "expiry": "YYYY-MM-DD" | null}]}
 *
 * A rule matches an item by fingerprint, else by title (and host when the rule names one).
 * An exception whose expiry (its last valid day) is before the scan's day is `expired`,
 * `exception_expired: true`, and the finding counts again in the operational score.
 */

export interface ExceptionRule {
  fingerprint: string | null;
  title: string | null;
  host: string | null;
  reason: string;
  approver: string;
  approved_at: string | null;
  expiry: string | null;
  /** Who set it, when the portal says (person, upload…): written as exception_source. */
  source?: string | null | undefined;
  /** For an exception an uploaded file set: the approver that file named (not an approval). */
  claimed_approver?: string | null | undefined;
}

export interface ParsedExceptions {
  rules: ExceptionRule[];
  /** One line per entry skipped (the run goes on without it). */
  warnings: string[];
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Parses the file's text; a file that is not the documented JSON yields no rules and one warning. */
export function parseExceptionsFile(text: string): ParsedExceptions {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return {
      rules: [],
      warnings: [`exceptions file: not valid JSON (${(err as Error).message}); no exceptions applied`],
    };
  }
  if (!lenient.isObj(doc) || !Array.isArray(doc['exceptions']))
    return {
      rules: [],
      warnings: ['exceptions file: expected an object with an "exceptions" array; no exceptions applied'],
    };
  const rules: ExceptionRule[] = [];
  const warnings: string[] = [];
  for (const [i, e] of (doc['exceptions'] as unknown[]).entries()) {
    const where = `exceptions file: entry ${i}`;
    if (!lenient.isObj(e)) {
      warnings.push(`${where} is not an object; skipped`);
      continue;
    }
    const fingerprint = lenient.str(e['fingerprint']);
    const title = lenient.str(e['title']);
    if (fingerprint !== null && !isFingerprint(fingerprint)) {
      warnings.push(`${where}: fingerprint must be 64 lower-case hex characters; skipped`);
      continue;
    }
    if (fingerprint === null && title === null) {
      warnings.push(`${where}: needs a fingerprint or a title; skipped`);
      continue;
    }
    const reason = lenient.str(e['reason']);
    const approver = lenient.str(e['approver']);
    if (reason === null || approver === null) {
      warnings.push(`${where}: reason and approver are required; skipped`);
      continue;
    }
    const expiry = e['expiry'] === undefined || e['expiry'] === null ? null : lenient.str(e['expiry']);
    if (expiry !== null && (!DAY.test(expiry) || Number.isNaN(Date.parse(`${expiry}T00:00:00Z`)))) {
      warnings.push(`${where}: expiry must be a date YYYY-MM-DD or null; skipped`);
      continue;
    }
    if (e['expiry'] !== undefined && e['expiry'] !== null && expiry === null) {
      warnings.push(`${where}: expiry must be a date YYYY-MM-DD or null; skipped`);
      continue;
    }
    const approvedAt = lenient.str(e['approved_at']);
    if (approvedAt !== null && Number.isNaN(Date.parse(approvedAt))) {
      warnings.push(`${where}: approved_at must be an ISO 8601 time; skipped`);
      continue;
    }
    rules.push({ fingerprint, title, host: lenient.str(e['host']), reason, approver, approved_at: approvedAt, expiry });
  }
  return { rules, warnings };
}

/**
 * The rule of an item: the first rule with its fingerprint, else the first fingerprint-less rule
 * with its title (and its host when the rule names one). Indexed once, so a long exceptions file
 * costs one lookup per item rather than a scan of every rule.
 */
function ruleIndex(rules: readonly ExceptionRule[]): (item: Remediation) => ExceptionRule | null {
  const byFingerprint = new Map<string, ExceptionRule>();
  const byTitle = new Map<string, ExceptionRule[]>();
  for (const r of rules) {
    if (r.fingerprint !== null) {
      if (!byFingerprint.has(r.fingerprint)) byFingerprint.set(r.fingerprint, r);
    } else if (r.title !== null) {
      const same = byTitle.get(r.title);
      if (same === undefined) byTitle.set(r.title, [r]);
      else same.push(r);
    }
  }
  return (item) => {
    if (item.fingerprint !== undefined) {
      const byFp = byFingerprint.get(item.fingerprint);
      if (byFp) return byFp;
    }
    const host = item.host?.toLowerCase();
    if (item.title === undefined) return null;
    return byTitle.get(item.title)?.find((r) => r.host === null || r.host.toLowerCase() === host) ?? null;
  };
}

/** The items with their exception fields set; `day` is the scan's date (YYYY-MM-DD, UTC). */
export function applyExceptions(
  items: readonly Remediation[],
  rules: readonly ExceptionRule[],
  day: string,
): Remediation[] {
  const ruleFor = ruleIndex(rules);
  return items.map((item) => {
    const rule = ruleFor(item);
    if (rule === null) {
      return {
        ...item,
        exception_status: null,
        exception_reason: null,
        exception_approver: null,
        exception_approved_at: null,
        exception_expiry: null,
        exception_expired: false,
      };
    }
    const expired = rule.expiry !== null && rule.expiry < day;
    return {
      ...item,
      exception_status: expired ? 'expired' : 'accepted',
      exception_reason: rule.reason,
      exception_approver: rule.approver,
      exception_approved_at: rule.approved_at,
      exception_expiry: rule.expiry,
      exception_expired: expired,
      // Only what the portal recorded of its origin: a local file's rule says nothing of it.
      ...(rule.source == null ? {} : { exception_source: rule.source }),
      ...(rule.claimed_approver == null ? {} : { exception_claimed_approver: rule.claimed_approver }),
    };
  });
}
