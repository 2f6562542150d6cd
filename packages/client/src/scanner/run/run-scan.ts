import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProgressStage, SessionFile, VulnIndex } from '@svc/protocol';
import { gateChannels } from '../../alerts/gate.ts';
import { alertSettingsFrom } from '../../alerts/settings.ts';
import type { Settings } from '../../kit/config/settings.ts';
import type { LicenseState } from '../../kit/license/tier.ts';
import type { ExceptionRule } from '../../pipeline/exceptions.ts';
import { orcSettingsFrom } from '../../pipeline/orc964.ts';
import { removedAfter } from '../../kit/process/exit-on-signals.ts';
import { scheduleFromSettings } from '../../kit/scheduling.ts';
import { portalPriorState } from '../../kit/portal/latest-state.ts';
import type { PortalTarget } from '../../kit/portal/target.ts';
import { brandingFromEnv } from '../../report/branding.ts';
import {
  addAnsweredHost,
  addScannedPorts,
  detectFindings,
  notCheckedLine,
  notCheckedOn,
  formatCommand,
  type NmapProgress,
  parseTargets,
  PROFILES,
  runNmap,
  scanTimeOf,
  toHostInfos,
} from '../index.ts';
import { EXTERNAL_TOOLS, type ExternalTool, type ToolContext } from '../tools/index.ts';
import { CoverageBuilder } from '../../pipeline/coverage-builder.ts';
import { claimSessionId } from '../../session-dir/claim.ts';
import { produceSession } from '../../session-dir/produce.ts';
import { ScanUploadError, type UploadedSession, uploadProduced } from '../../upload/produced-upload.ts';
import { CLIENT_VERSION } from '../../kit/version.ts';
import { mergeToolFindings } from './merge-findings.ts';
import { installedTools, runDiscovery, runEnrichment, type ToolRunOptions } from './tools-run.ts';

/** What one scan runs on: validated by the caller (the CLI, the agent), never read from a shell. */
export interface ScanInput {
  /** Targets, comma separated, already checked with the run's budget by the caller. */
  targets: string;
  profile: string;
  ports?: string | undefined;
  privileged: boolean;
  nmapPath: string;
  /**
   * A fixed command nmap and every tool run under, such as `['ip', 'netns', 'exec', ns]` in the
   * test network. It comes from code, never from the user.
   */
  wrapper?: readonly string[] | undefined;
  /** Seconds between nmap's progress reports (`--stats-every`); nmap-args.ts's default when unset. */
  statsEverySeconds?: number | undefined;
  /** Sessions root. */
  root: string;
  exceptions: readonly ExceptionRule[];
  settings: Settings;
  license: LicenseState;
  /** Where to upload the session afterwards; no upload when absent. */
  upload?: PortalTarget | undefined;
  /** The portal whose latest state of the target the remediation stage starts from; `upload` when absent. */
  portal?: PortalTarget | undefined;
  /** The optional tools to use when installed: every known one by default, none for `--no-tools`. */
  tools?: readonly ExternalTool[] | undefined;
  /** Validated DNS names for the DNS checks (`--domains`). */
  domains?: readonly string[] | undefined;
  /** The vulnerability index (the portal's, cached) services are matched against and findings enriched from. */
  vulnIndex?: VulnIndex | null | undefined;
}

export interface ScanDeps {
  now: () => Date;
  info: (message: string) => void;
  warn: (message: string) => void;
  /** Where the tools are looked up (PATH); the process's environment by default. */
  env?: NodeJS.ProcessEnv | undefined;
  /** nmap's progress (shown on a terminal, or as JSON lines with `svc scan --progress-json`). */
  onProgress?: ((progress: NmapProgress) => void) | undefined;
  /** Each stage of the pipeline as it starts (svc scan --progress-json). */
  onStage?: ((stage: ProgressStage) => void) | undefined;
}

export interface ScanResult {
  path: string;
  id: string;
  doc: SessionFile;
  upload?: UploadedSession | undefined;
  /** Every warning of the run, in order (each also went to deps.warn). */
  warnings: string[];
}

export { ScanUploadError };

/** Settings read as an env-style record (branding and ORC take one). */
export const valuesOf = (settings: Settings): Record<string, string | undefined> =>
  new Proxy({} as Record<string, string | undefined>, {
    get: (_t, key) => (typeof key === 'string' ? settings.get(key) : undefined),
  });

/**
 * One scan from nmap to a session directory (and the upload when asked): a discovery tool when one
 * wants the targets → nmap with the profile's fixed arguments → detection rules → the enrichment
 * tools on the services found, their findings merged → the pipeline and alerts → the session
 * directory → upload and benchmark. Throws NmapFailedError when nmap fails and ScanUploadError when
 * the upload does; everything else that goes wrong (a tool included) is a warning.
 */
export async function runScan(input: ScanInput, deps: ScanDeps): Promise<ScanResult> {
  const warnings: string[] = [];
  const warn = (m: string) => {
    warnings.push(m);
    deps.warn(m);
  };
  deps.info(
    input.privileged
      ? 'Running as root: SYN scan with OS detection'
      : 'Running as a normal user: TCP connect scan, no OS detection (run as root for SYN scan and OS guess)',
  );
  const startedAt = deps.now();
  // The tools' output is the customer's: removed however the scan ends, a Ctrl-C included.
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scan-tools-'));
  return removedAfter(
    () => fs.rmSync(workDir, { recursive: true, force: true }),
    () => scanWith(input, deps, { startedAt, workDir, warn, warnings }),
  );
}

interface RunState {
  startedAt: Date;
  workDir: string;
  warn: (message: string) => void;
  warnings: string[];
}

async function scanWith(input: ScanInput, deps: ScanDeps, state: RunState): Promise<ScanResult> {
  const { settings, license } = input;
  const { startedAt, warn, warnings } = state;
  const toolLog: string[] = [];
  const ran = new Set<string>();
  const ctx: ToolContext = {
    scanTime: startedAt,
    workDir: state.workDir,
    privileged: input.privileged,
    domains: input.domains ?? [],
    // Discovery sweeps the ports nmap would scan: --ports, else the profile's own list.
    ports:
      input.ports ??
      (Object.hasOwn(PROFILES, input.profile) ? PROFILES[input.profile as keyof typeof PROFILES].ports : undefined),
  };
  const toolOpts: ToolRunOptions = {
    ctx,
    wrapper: input.wrapper,
    env: deps.env ?? process.env,
    info: deps.info,
    // Tool problems never fail the scan: they are warnings.
    warn,
    log: (line) => toolLog.push(line),
    ran: (tool) => void ran.add(tool),
  };
  const tools = installedTools(input.tools ?? EXTERNAL_TOOLS, toolOpts);
  const stage = (s: ProgressStage) => deps.onStage?.(s);
  const targetList = parseTargets(input.targets, null).map((t) => t.value);
  if (tools.discovery.some((t) => t.tool.wants(targetList, ctx))) stage('discovery');
  const discovered = await runDiscovery(tools.discovery, targetList, toolOpts);
  stage('nmap');
  const result = await runNmap({
    targets: discovered?.targets ?? input.targets,
    profile: input.profile,
    ports: input.ports ?? discovered?.ports,
    privileged: input.privileged,
    nmapPath: input.nmapPath,
    wrapper: input.wrapper,
    statsEverySeconds: input.statsEverySeconds,
    onProgress: deps.onProgress,
  });
  deps.info(`nmap: ${formatCommand(result.command)} (${result.durationMs} ms)`);
  for (const w of result.warnings) warn(`nmap: ${w}`);
  if (!result.complete) warn('nmap was cut short (timeout): the session holds what it reported');
  ctx.scanTime = scanTimeOf(result.run) ?? deps.now();
  const ruleFindings = detectFindings(result.hosts, { scanTime: ctx.scanTime, vulnIndex: input.vulnIndex });
  const notChecked = notCheckedOn(result.hosts);
  const notCheckedLines = notChecked.map(notCheckedLine);
  for (const w of notCheckedLines) warn(w);
  if (tools.enrichment.length > 0) stage('enrichment');
  const toolFindings = await runEnrichment(tools.enrichment, result.hosts, toolOpts);
  const findings = mergeToolFindings(ruleFindings, toolFindings);
  const coverage = new CoverageBuilder();
  for (const h of result.hosts) addAnsweredHost(coverage, h);
  addScannedPorts(coverage, result.run);
  // nmap scanned only the open ports the sweep found; the ports it found closed were looked at too.
  if (discovered !== undefined) coverage.addPortList('tcp', discovered.swept);
  // After the tools, which can take minutes: the session ends now.
  const now = deps.now();
  const alerts = alertSettingsFrom(settings, warn);
  const statePortal = input.portal ?? input.upload;
  const notes: string[] = [];
  const portalState =
    statePortal === undefined
      ? null
      : await portalPriorState(statePortal, input.targets, license.client_id ?? undefined, warn, (m) => {
          notes.push(m);
          deps.info(m);
        });
  stage('session');
  // Two scans started in the same second (two targets) get the next free second (session-dir/claim.ts).
  const claimed = claimSessionId(input.root, startedAt);
  const produced = await produceSession({
    portalState,
    notes,
    root: input.root,
    findings,
    coverage: coverage.block({
      profile: result.profile,
      tools: ['nmap', ...[...ran].sort()],
      source: 'svc-scan',
      notChecked,
    }),
    vulnIndex: input.vulnIndex,
    hosts: toHostInfos(result.hosts),
    exceptions: input.exceptions,
    settings: {
      sessionId: claimed.id,
      target: input.targets,
      // The portal's answer names the key's client; offline, the configured CLIENT_ID (the
      // portal replaces it with the key's client at upload anyway).
      clientId: license.client_id ?? settings.get('CLIENT_ID')?.trim() ?? undefined,
      client: settings.get('CLIENT_NAME')?.trim() ?? undefined,
      toolVersion: CLIENT_VERSION,
      scanProfile: result.profile,
      startedAt,
      runId: randomBytes(16).toString('hex'),
      schedule: scheduleFromSettings(settings),
      orc: orcSettingsFrom(valuesOf(settings)),
    },
    license: { tier: license.tier, state: license },
    now,
    alerts: { ...alerts, channels: gateChannels(alerts.channels, license.tier, warn) },
    branding: brandingFromEnv(valuesOf(settings), (f) => fs.readFileSync(f), warn),
    preamble: [
      `nmap command ${formatCommand(result.command)}`,
      `nmap ${result.durationMs} ms (${result.startedAt} to ${result.finishedAt}, exit ${result.exitCode ?? result.signal}, ${result.mode} scan${result.complete ? '' : ', cut short'})`,
      // nmap's own warnings (a name it could not resolve, a host it skipped) explain a thin session later.
      ...result.warnings.map((w) => `nmap warning ${w}`),
      ...notCheckedLines.map((w) => `nmap not checked ${w}`),
      ...toolLog,
    ],
  }).finally(() => claimed.release());
  for (const w of produced.warnings) warn(w);

  let upload: ScanResult['upload'];
  if (input.upload !== undefined) {
    stage('upload');
    upload = await uploadProduced({ target: input.upload, produced, tier: license.tier, settings, warn });
  }
  return { path: produced.path, id: produced.id, doc: produced.doc, upload, warnings };
}
