/**
 * Compliance frameworks a session file maps findings to (docs/compliance.md),
 * spelled exactly as the scanner writes them, and the list of control ids of
 * each, in one unit per framework. A framework's total for the gap analysis is the length of
 * its list, and only ids of the list count as mapped, so gap = total − mapped is a real count.
 * docs/compliance.md names the publisher, version and date of every list.
 */
export const FRAMEWORKS = ['CIS Controls v8', 'NIST CSF', 'PCI-DSS v4.0', 'SOC 2', 'ORC 9.64'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** `prefix` + each number, e.g. numbered('GV.OC-', [1, 2]) is GV.OC-01, GV.OC-02 (pad 2). */
function numbered(prefix: string, numbers: readonly number[], pad = 0): string[] {
  return numbers.map((n) => `${prefix}${String(n).padStart(pad, '0')}`);
}
/** 1 … n. */
const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** CIS Controls v8: the Safeguards of Controls 1 to 18 (153), e.g. 4.7. */
const CIS_SAFEGUARDS_PER_CONTROL = [5, 7, 14, 12, 6, 8, 7, 12, 7, 7, 5, 8, 11, 9, 7, 14, 9, 5] as const;
const CIS_V8_SAFEGUARDS = CIS_SAFEGUARDS_PER_CONTROL.flatMap((count, i) => numbered(`${i + 1}.`, upTo(count)));

/**
 * NIST CSF 2.0: the Subcategories (106), e.g. PR.AA-01. Numbers withdrawn in 2.0 are gaps
 * (ID.AM-06, PR.DS-03 … 09 and others), so each category lists the numbers it keeps.
 */
const CSF_2_0_SUBCATEGORIES: readonly (readonly [string, readonly number[]])[] = [
  ['GV.OC', upTo(5)],
  ['GV.RM', upTo(7)],
  ['GV.RR', upTo(4)],
  ['GV.PO', upTo(2)],
  ['GV.OV', upTo(3)],
  ['GV.SC', upTo(10)],
  ['ID.AM', [1, 2, 3, 4, 5, 7, 8]],
  ['ID.RA', upTo(10)],
  ['ID.IM', upTo(4)],
  ['PR.AA', upTo(6)],
  ['PR.AT', upTo(2)],
  ['PR.DS', [1, 2, 10, 11]],
  ['PR.PS', upTo(6)],
  ['PR.IR', upTo(4)],
  ['DE.CM', [1, 2, 3, 6, 9]],
  ['DE.AE', [2, 3, 4, 6, 7, 8]],
  ['RS.MA', upTo(5)],
  ['RS.AN', [3, 6, 7, 8]],
  ['RS.CO', [2, 3]],
  ['RS.MI', [1, 2]],
  ['RC.RP', upTo(6)],
  ['RC.CO', [3, 4]],
];
const NIST_CSF_2_0 = CSF_2_0_SUBCATEGORIES.flatMap(([category, numbers]) => numbered(`${category}-`, numbers, 2));

/**
 * PCI DSS v4.0 (and v4.0.1): the requirements one level below the 12 principal ones (63),
 * e.g. 4.2; the appendices for particular entities (A1 to A3) are not counted.
 */
const PCI_REQUIREMENTS_PER_PRINCIPAL = [5, 3, 7, 2, 4, 5, 3, 6, 5, 7, 6, 10] as const;
const PCI_DSS_4_0 = PCI_REQUIREMENTS_PER_PRINCIPAL.flatMap((count, i) => numbered(`${i + 1}.`, upTo(count)));

/** SOC 2 (2017 Trust Services Criteria): the common criteria CC1.1 … CC9.2 (33). */
const SOC2_CRITERIA_PER_SERIES = [5, 3, 4, 2, 3, 8, 5, 1, 2] as const;
const SOC2_COMMON_CRITERIA = SOC2_CRITERIA_PER_SERIES.flatMap((count, i) => numbered(`CC${i + 1}.`, upTo(count)));

/** ORC 9.64(C)(1) to (C)(5): the five technical divisions; the ORC total for the gap analysis is 5. */
const ORC_964_DIVISIONS = numbered('9.64(C)(', upTo(5)).map((id) => `${id})`);
export const ORC_964_TECHNICAL_DIVISIONS = ORC_964_DIVISIONS.length;

export const FRAMEWORK_CONTROL_IDS: Readonly<Record<Framework, readonly string[]>> = {
  'CIS Controls v8': CIS_V8_SAFEGUARDS,
  'NIST CSF': NIST_CSF_2_0,
  'PCI-DSS v4.0': PCI_DSS_4_0,
  'SOC 2': SOC2_COMMON_CRITERIA,
  'ORC 9.64': ORC_964_DIVISIONS,
};

export const FRAMEWORK_CONTROL_TOTALS: Readonly<Record<Framework, number>> = Object.fromEntries(
  FRAMEWORKS.map((f) => [f, FRAMEWORK_CONTROL_IDS[f].length]),
) as Record<Framework, number>;

const isFramework = (framework: string): framework is Framework => Object.hasOwn(FRAMEWORK_CONTROL_IDS, framework);
const ID_SETS = new Map<string, ReadonlySet<string>>(FRAMEWORKS.map((f) => [f, new Set(FRAMEWORK_CONTROL_IDS[f])]));

/** The control total of a framework name; null for a framework not on the list. */
export function frameworkControlTotal(framework: string): number | null {
  return isFramework(framework) ? FRAMEWORK_CONTROL_TOTALS[framework] : null;
}

/** Whether `id` is on the list of one of the frameworks (false for any other framework). */
export function isFrameworkControl(framework: string, id: string): boolean {
  return ID_SETS.get(framework)?.has(id) ?? false;
}
