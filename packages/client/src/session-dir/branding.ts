import type { Branding } from '../report/index.ts';

/** SPEC "Report white-label configuration" defaults, for runs that set none of the REPORT_* variables. */
export function defaultBranding(): Branding {
  return {
    primaryColor: '#dc3545',
    headerBg: '#1a1a2e',
    headerText: '#ffffff',
    subtitle: 'Security Vulnerability Assessment',
    footerText: '',
    footerEmail: null,
    footerUrl: null,
    logo: null,
  };
}
