import fs from 'node:fs';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import type { Settings } from '../kit/config/settings.ts';
import { brandingFromEnv } from '../report/branding.ts';
import { renderExecSummary, renderReport } from '../report/index.ts';
import { historyOf, trendPointOf } from '../session-dir/target-history.ts';

const BRANDING_SETTINGS = [
  'REPORT_PRIMARY_COLOR',
  'REPORT_HEADER_BG',
  'REPORT_HEADER_TEXT',
  'REPORT_SUBTITLE',
  'REPORT_FOOTER_TEXT',
  'REPORT_FOOTER_EMAIL',
  'REPORT_FOOTER_URL',
  'COMPANY_LOGO',
] as const;

/**
 * Renders both display files of a session directory again from an updated document, with the
 * same trend (the target's earlier sessions beside it in the sessions root) and the white-label
 * settings of this run.
 */
export function rendererFor(
  sessionDir: string,
  settings: Settings,
  warn: (message: string) => void,
): (doc: SessionFile) => { report: string; execSummary: string } {
  const env = Object.fromEntries(BRANDING_SETTINGS.map((k) => [k, settings.get(k)]));
  const branding = brandingFromEnv(env, (file) => fs.readFileSync(file), warn);
  const root = path.dirname(path.resolve(sessionDir));
  const id = path.basename(path.resolve(sessionDir));
  return (doc) => {
    const target = typeof doc.metadata?.target === 'string' ? doc.metadata.target : '';
    const trend = [...historyOf(root, target, id).trend, trendPointOf(doc)];
    return { report: renderReport({ doc, trend, branding }), execSummary: renderExecSummary({ doc, trend, branding }) };
  };
}
