import fs from 'node:fs';
import type { Command } from 'commander';
import { alertSettingsFrom } from '../../alerts/settings.ts';
import { gateChannels } from '../../alerts/gate.ts';
import type { Settings } from '../../config/settings.ts';
import { licenseState } from '../../license/service.ts';
import { parseExceptionsFile, type ExceptionRule } from '../../pipeline/exceptions.ts';
import { orcSettingsFrom } from '../../pipeline/orc964.ts';
import { scheduleFromSettings } from '../../pipeline/scheduling.ts';
import { createPortalClient } from '../../portal/client.ts';
import { isSetupError, PortalError } from '../../portal/errors.ts';
import { brandingFromEnv } from '../../report/branding.ts';
import { findNmap, NMAP_MISSING } from '../../scan/nmap-path.ts';
import {
  detectFindings,
  formatCommand,
  NmapFailedError,
  parseTargets,
  PROFILES,
  runNmap,
  scanTimeOf,
  TargetError,
  toHostInfos,
  validatePorts,
} from '../../scanner/index.ts';
import { produceSession } from '../../session-dir/produce.ts';
import { sessionIdOf } from '../../session-dir/id.ts';
import { sessionsRootOf } from '../../session-dir/root.ts';
import { attachBenchmark } from '../../upload/benchmark.ts';
import { rendererFor } from '../../upload/render-again.ts';
import { CLIENT_VERSION } from '../../version.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, targetOf, targetOptions, type CommonOpts } from '../options.ts';
import { CliError, Output, usageError } from '../output.ts';
import { sessionDirFiles } from './upload.ts';

interface ScanOpts extends CommonOpts {
  targets?: string;
  profile: string;
  full?: boolean;
  ports?: string;
  upload?: boolean;
  sessionsDir?: string;
  exceptions?: string;
  json?: boolean;
}

/** Settings read as an env-style record (branding and ORC take one). */
const valuesOf = (settings: Settings): Record<string, string | undefined> =>
  new Proxy({} as Record<string, string | undefined>, {
    get: (_t, key) => (typeof key === 'string' ? settings.get(key) : undefined),
  });

function exceptionsOf(file: string | undefined, warn: (m: string) => void): ExceptionRule[] {
  if (file === undefined) return [];
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw usageError(`exceptions file not readable: ${file}`);
  }
  const parsed = parseExceptionsFile(text);
  for (const w of parsed.warnings) warn(w);
  return parsed.rules;
}

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('scan')
    .description('scan hosts with nmap, apply the detection rules and write a session directory')
    .option('--targets <list>', 'hosts, IPv4/IPv6 addresses, CIDR blocks or IPv4 ranges, comma separated (required)')
    .option('-P, --profile <name>', `scan profile: ${Object.keys(PROFILES).join(', ')}`, 'quick_recon')
    .option('--full', 'the full_recon profile')
    .option('--ports <list>', "a narrower port list than the profile's, e.g. T:22,80,443,U:161")
    .option('--upload', 'upload the session to the portal afterwards')
    .option('--sessions-dir <dir>', 'sessions root; default SVC_SESSIONS_DIR, ~/.svc/sessions')
    .option('--exceptions <file>', 'risk exceptions file (JSON)')
    .option('--json', 'print {path, session_id, summary} as JSON');
  configOption(cmd);
  targetOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nRuns nmap without a shell (SYN scan and OS guess as root, connect scan otherwise) and writes\n' +
      '<sessions root>/<YYYYMMDD_HHMMSS>/ with session_results.json, pipeline.log, report and executive summary.\n' +
      'docs/cli/scan.md has the profiles and examples. Exit 0 done; 1 nmap or the upload failed; 2 usage.',
  );
  cmd.action(async (opts: ScanOpts) => {
    const out = new Output(ctx.streams);
    const warn = (m: string) => out.warn(m);
    if (opts.targets === undefined) throw usageError('--targets is required (e.g. --targets 192.0.2.10,192.0.2.0/28)');
    const profile = opts.full ? 'full_recon' : opts.profile;
    if (!Object.hasOwn(PROFILES, profile))
      throw usageError(`unknown scan profile "${profile}": use one of ${Object.keys(PROFILES).join(', ')}`);
    try {
      parseTargets(opts.targets);
    } catch (err) {
      if (err instanceof TargetError) throw usageError(err.message);
      throw err;
    }
    if (opts.ports !== undefined) {
      try {
        validatePorts(opts.ports);
      } catch (err) {
        throw usageError((err as Error).message);
      }
    }
    const settings = settingsOf(opts, ctx);
    const exceptions = exceptionsOf(opts.exceptions, warn);
    const root = sessionsRootOf({ flag: opts.sessionsDir, settings, home: ctx.home });
    const target = opts.upload ? targetOf(opts, ctx, settings) : undefined;
    const nmapPath = findNmap(ctx.env);
    if (nmapPath === undefined) throw new CliError(NMAP_MISSING);

    // Licensing never fails a scan: every problem is a warning and the run goes on as community.
    const license = await licenseState({
      settings,
      home: ctx.home,
      now: ctx.now,
      warn,
      timeoutS: target?.timeoutS ?? (Number(opts.timeout) || 30),
      keyOverride: opts.key,
      urlOverride: target?.uploadUrl ?? opts.url,
    });

    const privileged = process.getuid?.() === 0;
    out.info(
      privileged
        ? 'Running as root: SYN scan with OS detection'
        : 'Running as a normal user: TCP connect scan, no OS detection (run as root for SYN scan and OS guess)',
    );
    const startedAt = ctx.now();
    const tty = ctx.streams.stderr.isTTY === true;
    let result: Awaited<ReturnType<typeof runNmap>>;
    try {
      result = await runNmap({
        targets: opts.targets,
        profile,
        ports: opts.ports,
        privileged,
        nmapPath,
        onProgress: tty ? (p) => out.info(`nmap: ${p.task} ${p.percent}%`) : undefined,
      });
    } catch (err) {
      if (err instanceof NmapFailedError) throw new CliError(err.message);
      throw err;
    }
    out.info(`nmap: ${formatCommand(result.command)} (${result.durationMs} ms)`);
    for (const w of result.warnings) warn(`nmap: ${w}`);
    if (!result.complete) warn('nmap was cut short (timeout): the session holds what it reported');
    const now = ctx.now();
    const findings = detectFindings(result.hosts, { scanTime: scanTimeOf(result.run) ?? now });
    const alerts = alertSettingsFrom(settings, warn);
    const produced = await produceSession({
      root,
      findings,
      hosts: toHostInfos(result.hosts),
      exceptions,
      settings: {
        sessionId: sessionIdOf(startedAt),
        target: opts.targets,
        clientId: license.client_id ?? undefined,
        toolVersion: CLIENT_VERSION,
        scanProfile: result.profile,
        startedAt,
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
      ],
    });
    for (const w of produced.warnings) warn(w);

    let upload: { session_id: string; share_url: string } | undefined;
    if (target !== undefined) {
      const client = createPortalClient({ target });
      let body: Awaited<ReturnType<typeof client.upload>>;
      try {
        body = await client.upload(sessionDirFiles(produced.path));
      } catch (err) {
        // The session is written either way; say where, so `svc upload <dir>` can retry it.
        if (err instanceof PortalError && !isSetupError(err))
          throw new CliError(`Upload failed: ${err.message} (the session is in ${produced.path})`);
        throw err;
      }
      upload = { session_id: body.session_id, share_url: body.share_url };
      await attachBenchmark({
        client,
        sessionDir: produced.path,
        sessionId: body.session_id,
        tier: license.tier,
        render: rendererFor(produced.path, settings, warn),
        warn,
      });
    }
    if (opts.json)
      return out.json({ path: produced.path, session_id: produced.id, summary: produced.doc.summary, upload });
    out.print(produced.path);
    const s = produced.doc.summary;
    out.info(
      `Session ${produced.id}: ${s?.total_findings ?? 0} findings on ${s?.total_hosts ?? 0} hosts, risk ${s?.risk_score ?? 0} (${s?.risk_grade ?? '-'})`,
    );
    if (upload) out.print(`Uploaded session ${upload.session_id}; share URL: ${upload.share_url}`);
  });
}
