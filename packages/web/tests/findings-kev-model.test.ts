import { describe, expect, it } from 'vitest';
import { epssText, FIRST_VIEW, KEV_CHOICES, kevText, queryOf } from '../src/sessions/findings-model.ts';

/** The console's words for KEV and EPSS (findings.tsx, findings-detail.tsx) and the kev filter's query. */

describe('KEV and EPSS in the findings table', () => {
  it('writes EPSS as a percentage with its percentile, nothing without a score', () => {
    expect(epssText({ epss: 0.42, epss_percentile: 0.971 })).toBe('EPSS 42.0 % (97th percentile)');
    expect(epssText({ epss: 0.0004, epss_percentile: 0.012 })).toBe('EPSS 0.0 % (1st percentile)');
    expect(epssText({ epss: 0.1, epss_percentile: 0.12 })).toBe('EPSS 10.0 % (12th percentile)');
    expect(epssText({ epss: 0.1, epss_percentile: null })).toBe('EPSS 10.0 %');
    expect(epssText({ epss: null, epss_percentile: 0.5 })).toBeNull();
  });

  it("names the catalogue and its date in the badge's title", () => {
    expect(kevText({ kev_date_added: '2025-01-10' })).toBe(
      "In CISA's Known Exploited Vulnerabilities catalogue since 2025-01-10",
    );
    expect(kevText({ kev_date_added: null })).toBe("In CISA's Known Exploited Vulnerabilities catalogue");
  });

  it('asks the portal for kev only when the filter is set', () => {
    expect(queryOf(FIRST_VIEW, '').kev).toBeUndefined();
    expect(queryOf({ ...FIRST_VIEW, kev: 'true' }, '').kev).toBe('true');
    expect(Object.keys(KEV_CHOICES)).toEqual(['true', 'false']);
  });
});
