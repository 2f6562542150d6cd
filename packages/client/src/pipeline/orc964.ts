import { ORC_964_TECHNICAL_DIVISIONS } from '@svc/protocol';
import { CONTROL_NAMES } from './compliance-map.ts';
import type { ComplianceRow } from './compliance.ts';

/**
 * The `.orc_964` block exactly per docs/session-file.md. It is
 * written only when ORC 9.64 is enabled (`ORC_964_ENABLED=true` or
 * `CLIENT_TYPE=political_subdivision`) and the key has the compliance permission; otherwise
 * the ORC rows are stripped from compliance[] and the block is omitted.
 */

export type AttestState = 'true' | 'false' | 'unknown';

export interface OrcSettings {
  enabled: boolean;
  subdivisionClass: 'county_city' | 'other';
  attest: { training: AttestState; notice7: AttestState; notice30: AttestState; ransomware: AttestState };
  /** Shown on the training attestation when set. */
  trainingNote: string | null;
}

export const ORC_ATTEST_VARIABLES = {
  training: 'ORC_ATTEST_TRAINING',
  notice7: 'ORC_ATTEST_NOTICE_7DAY',
  notice30: 'ORC_ATTEST_NOTICE_30DAY',
  ransomware: 'ORC_ATTEST_RANSOMWARE',
} as const;

const attestOf = (v: string | undefined): AttestState => {
  const s = v?.trim().toLowerCase();
  return s === 'true' || s === 'false' ? s : 'unknown';
};

/** ORC settings from configuration values (env-style names); anything unrecognised takes the default. */
export function orcSettingsFrom(values: Readonly<Record<string, string | undefined>>): OrcSettings {
  return {
    enabled:
      values['ORC_964_ENABLED']?.trim().toLowerCase() === 'true' ||
      values['CLIENT_TYPE']?.trim() === 'political_subdivision',
    subdivisionClass: values['ORC_SUBDIVISION_CLASS']?.trim() === 'county_city' ? 'county_city' : 'other',
    attest: {
      training: attestOf(values[ORC_ATTEST_VARIABLES.training]),
      notice7: attestOf(values[ORC_ATTEST_VARIABLES.notice7]),
      notice30: attestOf(values[ORC_ATTEST_VARIABLES.notice30]),
      ransomware: attestOf(values[ORC_ATTEST_VARIABLES.ransomware]),
    },
    trainingNote: values['ORC_ATTEST_TRAINING_NOTE']?.trim() || null,
  };
}

export interface Orc964Block {
  enabled: true;
  deadlines: { county_city: '2026-01-01'; other: '2026-07-01'; applicable: 'county_city' | 'other' };
  divisions: {
    id: string;
    name: string;
    type: 'technical';
    mapped: boolean;
    finding_ids: string[];
    finding_count: number;
  }[];
  attestations: { id: string; name: string; state: AttestState; note?: string }[];
  coverage: { technical_divisions_total: number; technical_divisions_covered: number };
}

export interface OrcResult {
  compliance: ComplianceRow[];
  orc_964: Orc964Block | null;
}

const ORC = 'ORC 9.64';
export const ORC_DIVISION_IDS = ['9.64(C)(1)', '9.64(C)(2)', '9.64(C)(3)', '9.64(C)(4)', '9.64(C)(5)'] as const;

export function applyOrc964(
  compliance: readonly ComplianceRow[],
  settings: OrcSettings,
  permitted: boolean,
): OrcResult {
  if (!settings.enabled || !permitted)
    return { compliance: compliance.filter((r) => r.framework !== ORC), orc_964: null };
  const orcRows = compliance.filter((r) => r.framework === ORC);
  const divisions = ORC_DIVISION_IDS.map((id) => {
    const ids = [...new Set(orcRows.filter((r) => r.control_id === id).flatMap((r) => r.finding_ids))];
    return {
      id,
      name: CONTROL_NAMES[ORC][id]!,
      type: 'technical' as const,
      mapped: ids.length > 0,
      finding_ids: ids,
      finding_count: ids.length,
    };
  });
  const { attest } = settings;
  return {
    compliance: [...compliance],
    orc_964: {
      enabled: true,
      deadlines: { county_city: '2026-01-01', other: '2026-07-01', applicable: settings.subdivisionClass },
      divisions,
      attestations: [
        {
          id: '9.64(C)(6)',
          name: 'Cybersecurity training of employees',
          state: attest.training,
          ...(settings.trainingNote === null ? {} : { note: settings.trainingNote }),
        },
        {
          id: '9.64(D)(1)',
          name: 'Incident notice to the Ohio Cyber Integration Center within 7 days',
          state: attest.notice7,
        },
        { id: '9.64(D)(2)', name: 'Incident notice to the Auditor of State within 30 days', state: attest.notice30 },
        { id: '9.64(B)', name: 'Ransomware payment approved by formal resolution', state: attest.ransomware },
      ],
      coverage: {
        technical_divisions_total: ORC_964_TECHNICAL_DIVISIONS,
        technical_divisions_covered: new Set(
          orcRows.map((r) => r.control_id).filter((id) => (ORC_DIVISION_IDS as readonly string[]).includes(id)),
        ).size,
      },
    },
  };
}
