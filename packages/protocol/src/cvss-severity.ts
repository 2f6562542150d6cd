import type { Severity } from './sessions.ts';

/**
 * A CVSS base score's severity, by the qualitative bands of CVSS v3 (the same for v3.1 and
 * v4.0): 9.0-10.0 critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low. The band "none" (0.0)
 * is our info. Each band starts at its lower edge, so a score between two bands (3.95) falls
 * in the lower one; a score below 0 or not a number is info as well.
 */
export function severityOfCvss(score: number): Severity {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'info';
}
