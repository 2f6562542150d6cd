/**
 * Compliance frameworks a session file maps findings to (SPEC "Compliance, topology and ORC
 * 9.64 data"), spelled exactly as the scanner writes them, and their control totals for the
 * gap analysis. ORC 9.64 counts its five technical divisions (SPEC: "ORC total_controls for
 * gap analysis is 5").
 */
export const FRAMEWORKS = ['CIS Controls v8', 'NIST CSF', 'PCI-DSS v4.0', 'SOC 2', 'ORC 9.64'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** ORC 9.64(C)(1) to (C)(5). */
export const ORC_964_TECHNICAL_DIVISIONS = 5;

export const FRAMEWORK_CONTROL_TOTALS: Readonly<Record<Framework, number>> = {
  'CIS Controls v8': 18,
  'NIST CSF': 6,
  'PCI-DSS v4.0': 12,
  'SOC 2': 5,
  'ORC 9.64': ORC_964_TECHNICAL_DIVISIONS,
};

/** The control total of a framework name; null for a framework SPEC does not name. */
export function frameworkControlTotal(framework: string): number | null {
  return Object.hasOwn(FRAMEWORK_CONTROL_TOTALS, framework) ? FRAMEWORK_CONTROL_TOTALS[framework as Framework] : null;
}
