import { Type, type Static } from '@sinclair/typebox';
import { SEVERITIES } from '../sessions.ts';
import { Fingerprint } from './fingerprint-shape.ts';

/**
 * One finding of `findings[]` (the contract leaves the entry open). Modelled on what mature scanners
 * emit (Nessus, OpenVAS, Nuclei, SARIF results): what was found (rule, title, severity), where
 * (host, port, protocol, service), why we believe it (evidence), and what to do (remediation,
 * references). Every field is optional so older files stay valid; `cve` (one id or null),
 * `cvss`, `solution`, `ip` and `hostname` are the names earlier scanners and the synthetic
 * generator write, kept alongside the structured fields.
 */

const text = (description: string) => Type.String({ description });

export const FindingSeverity = Type.Union(
  SEVERITIES.map((s) => Type.Literal(s)),
  { description: 'One of the five severities' },
);

export const FindingReferences = Type.Object(
  {
    cve: Type.Optional(
      Type.Array(Type.String({ pattern: '^CVE-\\d{4}-\\d{4,}$' }), { description: 'CVE ids, e.g. CVE-2024-6387' }),
    ),
    cwe: Type.Optional(Type.Array(Type.String({ pattern: '^CWE-\\d+$' }), { description: 'CWE ids, e.g. CWE-319' })),
    urls: Type.Optional(Type.Array(Type.String(), { description: 'Advisories and vendor notes' })),
  },
  { additionalProperties: true, description: 'Where the weakness is documented' },
);

/** How a finding naming a CVE was matched to it (docs/vuln-matching.md, "How a CVE was matched"). */
export const FINDING_MATCH_KINDS = ['version_range', 'distribution_package', 'check'] as const;
export type FindingMatchKind = (typeof FINDING_MATCH_KINDS)[number];

export const FindingMatch = Type.Object(
  {
    kind: Type.Union(
      FINDING_MATCH_KINDS.map((k) => Type.Literal(k)),
      {
        description:
          "version_range: the reported upstream version is in a range of the CVE (a feed's or the hand table's); " +
          "distribution_package: the distribution's security data says this package revision is not fixed; " +
          'check: a script, a probe or a tool observed the weakness itself',
      },
    ),
    confidence: Type.Union([Type.Literal('confirmed'), Type.Literal('potential')], {
      description: 'potential: on the upstream version alone (a distribution may have backported the fix)',
    }),
    source: Type.Optional(
      text('What it was matched against: "NVD", "Debian security tracker", "known-vulnerable table", a script'),
    ),
    distribution: Type.Optional(
      Type.Object(
        {
          name: text('The distribution: debian'),
          release: text('Its release the package belongs to: bookworm'),
          package: text('The source package: openssh'),
          version: text('The package as seen: 9.2p1-2'),
          fixed_version: Type.Union([Type.String(), Type.Null()], {
            description: "The release's fixed version, null while the distribution has no fix",
          }),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true, description: 'How the CVEs of the finding were matched' },
);
export type FindingMatch = Static<typeof FindingMatch>;

export const Finding = Type.Object(
  {
    id: Type.Optional(
      text('Id within this session (e.g. f-001), referenced by compliance[].finding_ids and orc_964 divisions'),
    ),
    fingerprint: Type.Optional(Fingerprint),
    rule_id: Type.Optional(text('The check that found it (scanner rule, plugin or template id)')),
    title: Type.Optional(text('Short name of the weakness')),
    severity: Type.Optional(FindingSeverity),
    host: Type.Optional(text('Address of the affected host')),
    ip: Type.Optional(text('Older name of host')),
    hostname: Type.Optional(text('Name of the affected host, when known')),
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65535, description: 'Affected port; absent for host-level findings' }),
    ),
    protocol: Type.Optional(text('Transport protocol: tcp, udp, icmp...')),
    service: Type.Optional(text('Service on the port (e.g. ssh, https)')),
    evidence: Type.Optional(text('What the scanner observed: a banner, a response, a version')),
    description: Type.Optional(text('What the weakness is and why it matters')),
    remediation: Type.Optional(text('Advice to fix it')),
    solution: Type.Optional(text('Older name of remediation')),
    references: Type.Optional(FindingReferences),
    cvss: Type.Optional(Type.Number({ minimum: 0, maximum: 10, description: 'CVSS base score' })),
    kev: Type.Optional(
      Type.Boolean({ description: "True when a CVE it names is in CISA's Known Exploited Vulnerabilities catalogue" }),
    ),
    kev_date_added: Type.Optional(
      Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'When the catalogue added it, YYYY-MM-DD' }),
    ),
    epss: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'EPSS probability of exploitation in the next 30 days' }),
    ),
    epss_percentile: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Where that probability ranks among all scored CVEs' }),
    ),
    cve: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Older single CVE id, or null' })),
    match: Type.Optional(FindingMatch),
  },
  { additionalProperties: true, description: 'One finding of the scan' },
);
export type Finding = Static<typeof Finding>;
