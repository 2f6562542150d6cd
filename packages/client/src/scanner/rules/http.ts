import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { allElemValues, elemAt, portScript, tableAt, tables } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/** HTTP without TLS, missing security headers, and directory listings. */

const HTTP_NAMES = new Set(['http', 'https', 'http-proxy', 'http-alt', 'https-alt']);
const HTTP_SCRIPTS = ['http-title', 'http-headers', 'http-security-headers', 'http-ls'];

/** A web service by its detected name, or because the HTTP scripts (which probe the protocol) answered. */
function isHttp(port: NmapPort): boolean {
  const name = port.service?.name ?? '';
  return HTTP_NAMES.has(name) || port.scripts.some((s) => HTTP_SCRIPTS.includes(s.id));
}

function isTls(port: NmapPort): boolean {
  return port.service?.tunnel === 'ssl' || port.service?.name === 'https';
}

/** Header lines as nmap saw them (`Name: value`), lower-cased names; null when neither header script ran. */
function observedHeaders(port: NmapPort): Map<string, string> | null {
  const headers = portScript(port, 'http-headers');
  const security = portScript(port, 'http-security-headers');
  if (headers === undefined && security === undefined) return null;
  const lines = [
    ...(headers?.output.split('\n') ?? []),
    ...(security === undefined ? [] : allElemValues(security.children).map((v) => v.replace(/^Header:\s*/, ''))),
  ];
  const out = new Map<string, string>();
  for (const line of lines) {
    const m = /^\s*([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (m?.[1] !== undefined) out.set(m[1].toLowerCase(), (m[2] ?? '').trim());
  }
  return out;
}

function redirectTarget(port: NmapPort, headers: Map<string, string> | null): string | undefined {
  const title = portScript(port, 'http-title');
  return (title === undefined ? undefined : elemAt(title.children, 'redirect_url')) ?? headers?.get('location');
}

const LOGIN_PAGE = /log ?in|sign ?in|admin|password|webmail|dashboard/i;

function noTls(host: NmapHost, port: NmapPort, headers: Map<string, string> | null): ScanFinding[] {
  if (isTls(port)) return [];
  const target = redirectTarget(port, headers);
  if (target?.toLowerCase().startsWith('https://')) return [];
  const title = portScript(port, 'http-title');
  const pageTitle = title === undefined ? undefined : elemAt(title.children, 'title');
  const login = pageTitle !== undefined && LOGIN_PAGE.test(pageTitle);
  return [
    finding(host, port, {
      rule_id: 'http-no-tls',
      title: login ? 'Login page served over HTTP without TLS' : 'Web service without TLS',
      severity: login ? 'medium' : 'low',
      category: 'cleartext_protocol',
      evidence: `${serviceEvidence(port)}${pageTitle === undefined ? '' : `; title "${pageTitle}"`}; no redirect to HTTPS observed`,
      description:
        'The web service answers over plain HTTP and does not redirect to HTTPS, so its pages, cookies and any ' +
        'credentials entered cross the network unencrypted and can be altered in transit.',
      remediation: 'Serve the site over HTTPS only and redirect HTTP to HTTPS (then enable HSTS).',
      cwe: ['CWE-319'],
    }),
  ];
}

interface HeaderRule {
  rule_id: string;
  header: string;
  missing: (h: Map<string, string>) => boolean;
  tlsOnly: boolean;
  description: string;
  remediation: string;
  cwe: string;
}

const HEADER_RULES: readonly HeaderRule[] = [
  {
    rule_id: 'http-missing-hsts',
    header: 'Strict-Transport-Security',
    missing: (h) => !h.has('strict-transport-security'),
    tlsOnly: true,
    description: 'The HTTPS site sends no Strict-Transport-Security header, so browsers may be downgraded to HTTP.',
    remediation: 'Send Strict-Transport-Security: max-age=31536000; includeSubDomains on HTTPS responses.',
    cwe: 'CWE-319',
  },
  {
    rule_id: 'http-missing-csp',
    header: 'Content-Security-Policy',
    missing: (h) => !h.has('content-security-policy'),
    tlsOnly: false,
    description: 'No Content-Security-Policy header: the browser has no policy limiting scripts, which eases XSS.',
    remediation: "Send a Content-Security-Policy (start with default-src 'self') fitted to the application.",
    cwe: 'CWE-693',
  },
  {
    rule_id: 'http-missing-frame-options',
    header: 'X-Frame-Options',
    missing: (h) => !h.has('x-frame-options') && !/frame-ancestors/i.test(h.get('content-security-policy') ?? ''),
    tlsOnly: false,
    description:
      'Neither X-Frame-Options nor CSP frame-ancestors is sent, so other sites can frame the pages (clickjacking).',
    remediation: "Send X-Frame-Options: DENY (or SAMEORIGIN) or CSP frame-ancestors 'none'.",
    cwe: 'CWE-1021',
  },
  {
    rule_id: 'http-missing-content-type-options',
    header: 'X-Content-Type-Options',
    missing: (h) => (h.get('x-content-type-options') ?? '').toLowerCase() !== 'nosniff',
    tlsOnly: false,
    description:
      'X-Content-Type-Options: nosniff is not sent, so browsers may MIME-sniff responses into active content.',
    remediation: 'Send X-Content-Type-Options: nosniff on every response.',
    cwe: 'CWE-693',
  },
];

function missingHeaders(host: NmapHost, port: NmapPort, headers: Map<string, string> | null): ScanFinding[] {
  if (headers === null) return [];
  const tls = isTls(port);
  // A redirect's own headers say little about the pages; only HSTS belongs on it.
  const redirect = redirectTarget(port, headers) !== undefined;
  const shown = [...headers.keys()].filter((k) => k !== 'date' && k !== 'content-length').join(', ');
  return HEADER_RULES.filter((r) => (!r.tlsOnly || tls) && (!redirect || r.tlsOnly) && r.missing(headers)).map((r) =>
    finding(host, port, {
      rule_id: r.rule_id,
      title: `Missing HTTP security header: ${r.header}`,
      severity: 'low',
      category: 'misconfiguration',
      evidence: `${serviceEvidence(port)}; response headers seen: ${shown || 'none'}`,
      description: r.description,
      remediation: r.remediation,
      cwe: [r.cwe],
      urls: ['https://owasp.org/www-project-secure-headers/'],
    }),
  );
}

const LISTING_TITLE = /^(Index of \/|Directory listing for \/)/i;

function directoryListing(host: NmapHost, port: NmapPort): ScanFinding[] {
  const ls = portScript(port, 'http-ls');
  const volumes = ls === undefined ? [] : tables(tableAt(ls.children, 'volumes')?.children ?? []);
  const title = portScript(port, 'http-title');
  const pageTitle = title === undefined ? undefined : elemAt(title.children, 'title');
  let evidence: string | undefined;
  if (volumes.length > 0) {
    const names = volumes.flatMap((v) =>
      tables(tableAt(v.children, 'files')?.children ?? []).map((f) => elemAt(f.children, 'filename') ?? ''),
    );
    const where = volumes.map((v) => elemAt(v.children, 'volume') ?? '/').join(', ');
    evidence = `http-ls: listing of ${where}: ${names.filter((n) => n !== '').join(', ')}`;
  } else if (pageTitle !== undefined && LISTING_TITLE.test(pageTitle)) {
    evidence = `http-title: "${pageTitle}"`;
  }
  if (evidence === undefined) return [];
  return [
    finding(host, port, {
      rule_id: 'directory-listing',
      title: 'Web server directory listing enabled',
      severity: 'medium',
      category: 'misconfiguration',
      evidence,
      description:
        'The web server lists directory contents, exposing file names (backups, configuration, data) that were ' +
        'never meant to be linked and helping attackers find them.',
      remediation: 'Disable automatic indexes (nginx: autoindex off; Apache: Options -Indexes) and remove stray files.',
      cwe: ['CWE-548'],
    }),
  ];
}

export const http: RuleFamily = {
  id: 'http',
  scripts: HTTP_SCRIPTS,
  evaluate(host) {
    return openPorts(host)
      .filter(isHttp)
      .flatMap((port) => {
        const headers = observedHeaders(port);
        return [...noTls(host, port, headers), ...missingHeaders(host, port, headers), ...directoryListing(host, port)];
      });
  },
};
