import { FRAMEWORKS, lenient, severityOf, type Framework } from '@svc/protocol';
import { CATEGORIES, CATEGORY_CONTROLS, CONTROL_NAMES, RULE_CATEGORIES, type Category } from './compliance-map.ts';
import type { StageFinding } from './types.ts';

/**
 * compliance[]: the controls of the five frameworks each finding maps to (compliance-map.ts).
 * A finding's category is its own `category` field when known, else its rule id's, else
 * `vulnerable_software` when it names a CVE; informational findings map to nothing. Rows come
 * framework by framework (FRAMEWORKS order), controls in order of first appearance, each with
 * the ids of its findings in input order.
 */

export interface ComplianceRow {
  framework: Framework;
  control_id: string;
  control_name: string;
  finding_ids: string[];
}

const KNOWN_CATEGORIES: ReadonlySet<string> = new Set(CATEGORIES);

export function categoryOf(f: StageFinding): Category | null {
  const own = lenient.str(f.category);
  if (own !== null && KNOWN_CATEGORIES.has(own)) return own as Category;
  if (typeof f.rule_id === 'string' && Object.hasOwn(RULE_CATEGORIES, f.rule_id)) return RULE_CATEGORIES[f.rule_id]!;
  if ((f.references?.cve?.length ?? 0) > 0 || lenient.str(f.cve) !== null) return 'vulnerable_software';
  return null;
}

export function mapCompliance(findings: readonly StageFinding[]): ComplianceRow[] {
  // Each finding's category once, not once per framework; informational findings map to nothing.
  const mapped: { id: string; category: Category }[] = [];
  for (const f of findings) {
    if (severityOf(f.severity) === 'info') continue;
    const category = categoryOf(f);
    if (category !== null) mapped.push({ id: f.id, category });
  }
  const rows: ComplianceRow[] = [];
  for (const framework of FRAMEWORKS) {
    // A set beside each id list keeps a repeated id out without scanning the list.
    const controls = new Map<string, { ids: string[]; seen: Set<string> }>();
    for (const { id, category } of mapped) {
      for (const control of CATEGORY_CONTROLS[category][framework]) {
        let entry = controls.get(control);
        if (entry === undefined) {
          entry = { ids: [], seen: new Set() };
          controls.set(control, entry);
        }
        if (entry.seen.has(id)) continue;
        entry.seen.add(id);
        entry.ids.push(id);
      }
    }
    for (const [control_id, { ids }] of controls)
      rows.push({
        framework,
        control_id,
        control_name: CONTROL_NAMES[framework][control_id] ?? control_id,
        finding_ids: ids,
      });
  }
  return rows;
}
