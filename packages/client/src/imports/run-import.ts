import fs from 'node:fs';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import { gateChannels } from '../alerts/gate.ts';
import { alertSettingsFrom } from '../alerts/settings.ts';
import { orcSettingsFrom } from '../pipeline/orc964.ts';
import { portalPriorState } from '../kit/portal/latest-state.ts';
import { brandingFromEnv } from '../report/branding.ts';
import { type ScanInput, valuesOf } from '../scanner/run/run-scan.ts';
import { claimSessionId } from '../session-dir/claim.ts';
import { produceSession } from '../session-dir/produce.ts';
import { type UploadedSession, uploadProduced } from '../upload/produced-upload.ts';
import { CLIENT_VERSION } from '../kit/version.ts';
import type { ForeignFormat } from './common.ts';
import { parseForeignFile } from './detect.ts';
import { ImportError } from './guard.ts';
import { checksLine, type ImportChecks } from './keep.ts';
import { coverageWithTargets, dnsLookup, type ImportTarget, type Lookup } from './targets.ts';

/**
 * A foreign scanner's file to a session, through the pipeline a scan goes through: parse (the
 * format detected or given) → the target's prior state (the portal's latest, the local previous
 * session) → stages, alerts, report → the session directory → the upload when asked.
 */
export interface ImportInput
  extends Pick<ScanInput, 'root' | 'exceptions' | 'settings' | 'license' | 'upload' | 'portal' | 'vulnIndex'> {
  file: string;
  format: ForeignFormat | 'auto';
  /** The scan target remediation tracks; from the file, else `targets`, else its sorted hosts, when absent. */
  target?: string | undefined;
  /** What a Nuclei run was pointed at (`--targets`): covered, so a clean run resolves what it looked at. */
  targets?: readonly ImportTarget[] | undefined;
  maxBytes: number;
}

export interface ImportResult {
  path: string;
  id: string;
  doc: SessionFile;
  format: ForeignFormat;
  /** What the import left out or cut (docs/cli/import.md "Hosts and host names", "Limits"). */
  checks: ImportChecks;
  upload?: UploadedSession | undefined;
}

export async function runImport(
  input: ImportInput,
  deps: { now: () => Date; info: (m: string) => void; warn: (m: string) => void; lookup?: Lookup },
): Promise<ImportResult> {
  const { settings, license } = input;
  const { warn } = deps;
  const begun = deps.now();
  const scan = await parseForeignFile(input.file, {
    format: input.format,
    maxBytes: input.maxBytes,
    now: begun,
    vulnIndex: input.vulnIndex,
    targets: input.targets,
  });
  const targets = input.targets ?? [];
  if (targets.length > 0 && scan.format !== 'nuclei')
    throw new ImportError(
      `--targets applies to Nuclei output, which does not say what it scanned; ${input.file} is ${scan.format} and states its own scope`,
      'usage',
    );
  const read = deps.now().getTime() - begun.getTime();
  const checked = checksLine(scan.checks);
  const shape = scan.variant === undefined ? '' : ` (${scan.variant})`;
  deps.info(
    `${scan.format}${shape}: ${scan.records} records, ${scan.findings.length} findings on ${scan.hosts.length} hosts (${read} ms)`,
  );
  if (checked !== '') warn(checked);
  const coverage =
    targets.length === 0
      ? scan.coverage
      : await coverageWithTargets(scan.coverage, targets, deps.lookup ?? dnsLookup, warn);
  const target =
    input.target?.trim() ||
    scan.target ||
    targets.map((t) => t.text).join(',') ||
    scan.hosts.map((h) => h.ip).join(',') ||
    path.basename(input.file);
  // The file's own times where it has them: the scan ran then, not when it was imported.
  const startedAt = scan.startedAt ?? scan.finishedAt ?? begun;
  const end = scan.finishedAt ?? startedAt;
  const statePortal = input.portal ?? input.upload;
  const notes: string[] = [];
  const portalState =
    statePortal === undefined
      ? null
      : await portalPriorState(statePortal, target, license.client_id ?? undefined, warn, (m) => {
          notes.push(m);
          deps.info(m);
        });
  const alerts = alertSettingsFrom(settings, warn);
  const size = fs.statSync(input.file).size;
  // The import's own clock names the session: a file imported twice gives two sessions, and
  // two imports in the same second take the next free second (session-dir/claim.ts).
  const claimed = claimSessionId(input.root, begun);
  const produced = await produceSession({
    portalState,
    notes,
    root: input.root,
    findings: scan.findings,
    coverage,
    vulnIndex: input.vulnIndex,
    hosts: scan.hosts,
    exceptions: input.exceptions,
    settings: {
      sessionId: claimed.id,
      target,
      clientId: license.client_id ?? settings.get('CLIENT_ID')?.trim() ?? undefined,
      client: settings.get('CLIENT_NAME')?.trim() ?? undefined,
      toolVersion: CLIENT_VERSION,
      scanProfile: `import:${scan.format}`,
      startedAt,
      schedule: null,
      orc: orcSettingsFrom(valuesOf(settings)),
    },
    license: { tier: license.tier, state: license },
    now: end,
    alerts: { ...alerts, channels: gateChannels(alerts.channels, license.tier, warn) },
    branding: brandingFromEnv(valuesOf(settings), (f) => fs.readFileSync(f), warn),
    metadata: {
      source: {
        tool: scan.format,
        ...(scan.variant === undefined ? {} : { variant: scan.variant }),
        ...(scan.version === undefined ? {} : { version: scan.version }),
        file: path.basename(input.file),
        imported_at: begun.toISOString(),
      },
    },
    preamble: [
      `import ${scan.format}${shape} ${JSON.stringify(path.basename(input.file))} (${size} bytes): ${scan.records} records, ${scan.findings.length} findings, ${read} ms`,
      ...(checked === '' ? [] : [`import checks: ${checked}`]),
    ],
  }).finally(() => claimed.release());
  for (const w of produced.warnings) warn(w);
  const upload =
    input.upload === undefined
      ? undefined
      : await uploadProduced({ target: input.upload, produced, tier: license.tier, settings, warn });
  return { path: produced.path, id: produced.id, doc: produced.doc, format: scan.format, checks: scan.checks, upload };
}
