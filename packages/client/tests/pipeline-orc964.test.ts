import { describe, expect, it } from 'vitest';
import type { ComplianceRow } from '../src/pipeline/compliance.ts';
import { applyOrc964, orcSettingsFrom } from '../src/pipeline/orc964.ts';

const rows: ComplianceRow[] = [
  {
    framework: 'CIS Controls v8',
    control_id: '3.10',
    control_name: 'Encrypt Sensitive Data in Transit',
    finding_ids: ['f-001'],
  },
  {
    framework: 'ORC 9.64',
    control_id: '9.64(C)(1)',
    control_name: 'Identify and address critical functions and cybersecurity risks',
    finding_ids: ['f-001', 'f-002'],
  },
  {
    framework: 'ORC 9.64',
    control_id: '9.64(C)(3)',
    control_name: 'Detect cybersecurity threats and events',
    finding_ids: ['f-002'],
  },
];

describe('ORC 9.64 settings', () => {
  it('enabled by ORC_964_ENABLED=true or CLIENT_TYPE=political_subdivision; the defaults otherwise', () => {
    expect(orcSettingsFrom({})).toEqual({
      enabled: false,
      subdivisionClass: 'other',
      attest: { training: 'unknown', notice7: 'unknown', notice30: 'unknown', ransomware: 'unknown' },
      trainingNote: null,
    });
    expect(orcSettingsFrom({ ORC_964_ENABLED: 'true' }).enabled).toBe(true);
    expect(orcSettingsFrom({ ORC_964_ENABLED: 'yes' }).enabled).toBe(false);
    expect(orcSettingsFrom({ CLIENT_TYPE: 'political_subdivision' }).enabled).toBe(true);
    expect(
      orcSettingsFrom({
        ORC_SUBDIVISION_CLASS: 'county_city',
        ORC_ATTEST_TRAINING: 'true',
        ORC_ATTEST_NOTICE_7DAY: 'false',
        ORC_ATTEST_NOTICE_30DAY: 'maybe',
        ORC_ATTEST_RANSOMWARE: 'TRUE',
        ORC_ATTEST_TRAINING_NOTE: 'KnowBe4, 2025-01',
      }),
    ).toMatchObject({
      subdivisionClass: 'county_city',
      attest: { training: 'true', notice7: 'false', notice30: 'unknown', ransomware: 'true' },
      trainingNote: 'KnowBe4, 2025-01',
    });
  });
});

describe('the orc_964 block', () => {
  const settings = orcSettingsFrom({
    ORC_964_ENABLED: 'true',
    ORC_SUBDIVISION_CLASS: 'county_city',
    ORC_ATTEST_TRAINING: 'true',
    ORC_ATTEST_TRAINING_NOTE: 'annual',
  });

  it('is exactly the shape: deadlines, five technical divisions, four attestations, coverage', () => {
    const { compliance, orc_964 } = applyOrc964(rows, settings, true);
    expect(compliance).toEqual(rows);
    expect(orc_964).toEqual({
      enabled: true,
      deadlines: { county_city: '2026-01-01', other: '2026-07-01', applicable: 'county_city' },
      divisions: [
        {
          id: '9.64(C)(1)',
          name: 'Identify and address critical functions and cybersecurity risks',
          type: 'technical',
          mapped: true,
          finding_ids: ['f-001', 'f-002'],
          finding_count: 2,
        },
        {
          id: '9.64(C)(2)',
          name: 'Identify potential impacts of cybersecurity incidents',
          type: 'technical',
          mapped: false,
          finding_ids: [],
          finding_count: 0,
        },
        {
          id: '9.64(C)(3)',
          name: 'Detect cybersecurity threats and events',
          type: 'technical',
          mapped: true,
          finding_ids: ['f-002'],
          finding_count: 1,
        },
        {
          id: '9.64(C)(4)',
          name: 'Respond to cybersecurity threats and incidents',
          type: 'technical',
          mapped: false,
          finding_ids: [],
          finding_count: 0,
        },
        {
          id: '9.64(C)(5)',
          name: 'Recover from cybersecurity incidents and repair infrastructure',
          type: 'technical',
          mapped: false,
          finding_ids: [],
          finding_count: 0,
        },
      ],
      attestations: [
        { id: '9.64(C)(6)', name: 'Cybersecurity training of employees', state: 'true', note: 'annual' },
        {
          id: '9.64(D)(1)',
          name: 'Incident notice to the Ohio Cyber Integration Center within 7 days',
          state: 'unknown',
        },
        { id: '9.64(D)(2)', name: 'Incident notice to the Auditor of State within 30 days', state: 'unknown' },
        { id: '9.64(B)', name: 'Ransomware payment approved by formal resolution', state: 'unknown' },
      ],
      coverage: { technical_divisions_total: 5, technical_divisions_covered: 2 },
    });
  });

  it('without the compliance permission the block is omitted and the ORC rows stripped', () => {
    expect(applyOrc964(rows, settings, false)).toEqual({ compliance: [rows[0]], orc_964: null });
  });

  it('when ORC 9.64 is not enabled the block is omitted and the ORC rows stripped', () => {
    expect(applyOrc964(rows, orcSettingsFrom({}), true)).toEqual({ compliance: [rows[0]], orc_964: null });
  });
});
