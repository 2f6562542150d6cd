import fs from 'node:fs';
import { SCAN_BUDGET_SETTING, scanBudgetOf } from '@svc/protocol';
import type { Command } from 'commander';
import { licenseState } from '../../kit/license/service.ts';
import { vulnIndexForRun } from '../../cve-match/vuln-index-cache.ts';
import { parseExceptionsFile, type ExceptionRule } from '../../pipeline/exceptions.ts';
import { parseDomains } from '../../scanner/run/domains.ts';
import { findNmap, NMAP_MISSING } from '../../kit/nmap-path.ts';
import { runScan, ScanUploadError } from '../../scanner/run/run-scan.ts';
import { NmapFailedError, parseTargets, PROFILES, TargetError, validatePorts } from '../../scanner/index.ts';
import { EXTERNAL_TOOLS } from '../../scanner/tools/index.ts';
import { findingsOfRecordLine } from '../../upload/outcome.ts';
import { sessionsRootOf } from '../../kit/session-dir/root.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, targetOf, targetOptions, type CommonOpts } from '../options.ts';
import { CliError, Output, scanSummaryLine, shareLinkText, usageError } from '../output.ts';
import { progressJsonWriter, stageJsonWriter, statsEveryOf } from '../progress-json.ts';

interface ScanOpts extends CommonOpts {
  targets?: string;
  profile: string;
  full?: boolean;
  ports?: string;
  upload?: boolean;
  sessionsDir?: string;
  exceptions?: string;
  json?: boolean;
  progressJson?: boolean;
  statsEvery?: string;
  domains?: string;
  /** commander's negation of `--no-tools`. */
  tools: boolean;
}

export function exceptionsOf(file: string | undefined, warn: (m: string) => void): ExceptionRule[] {
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

export function configuredPortal(opts: CommonOpts, ctx: CliContext, settings: ReturnType<typeof settingsOf>) {
  if (opts.url === undefined && (settings.get('CONSULTATION_API_URL') ?? '').trim() === '') return undefined;
  try {
    const portal = targetOf(opts, ctx, settings);
    return portal.apiKey === null ? undefined : portal;
  } catch {
    return undefined;
  }
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
    .option('--json', 'print {path, session_id, summary} as JSON')
    .option(
      '--progress-json',
      'write nmap\'s progress to stderr as JSON lines: {"progress":{"task":...,"percent":...}}',
    )
    .option('--stats-every <seconds>', "seconds between nmap's progress reports, 1-3600 (default 10)")
    .option('--domains <list>', 'DNS names for the DNS checks (zone transfer, SPF, DMARC), comma separated')
    .option('--no-tools', 'nmap and its rules only: no optional tool runs (testssl.sh, sslscan, whatweb...)');
  configOption(cmd);
  targetOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nRuns nmap without a shell (SYN scan and OS guess as root, connect scan otherwise) and writes\n' +
      '<sessions root>/<YYYYMMDD_HHMMSS>/ with session_results.json, pipeline.log, report and executive summary.\n' +
      'Optional tools (testssl.sh, sslscan, whatweb...) run when installed; docs/scanner/tools.md lists them.\n' +
      "nmap's progress: shown on a terminal; with --progress-json one JSON line per report on stderr,\n" +
      '  {"progress":{"task":"SYN Stealth Scan","percent":45.2}}, for a caller that is not a terminal (svcd).\n' +
      'docs/cli/scan.md has the profiles and examples. Exit 0 done; 1 nmap or the upload failed; 2 usage.',
  );
  cmd.action(async (opts: ScanOpts) => {
    const out = new Output(ctx.streams);
    const warn = (m: string) => out.warn(m);
    if (opts.targets === undefined) throw usageError('--targets is required (e.g. --targets 192.0.2.10,192.0.2.0/28)');
    const profile = opts.full ? 'full_recon' : opts.profile;
    if (!Object.hasOwn(PROFILES, profile))
      throw usageError(`unknown scan profile "${profile}": use one of ${Object.keys(PROFILES).join(', ')}`);
    const statsEvery = opts.statsEvery === undefined ? undefined : statsEveryOf(opts.statsEvery);
    if (statsEvery === null) throw usageError('--stats-every must be a whole number of seconds from 1 to 3600');
    const settings = settingsOf(opts, ctx);
    const budget = scanBudgetOf(settings.get(SCAN_BUDGET_SETTING));
    if (!budget.ok) throw usageError(budget.message);
    let targets: string;
    try {
      targets = parseTargets(opts.targets, budget.budget)
        .map((t) => t.value)
        .join(',');
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
    let domains: string[] = [];
    if (opts.domains !== undefined) {
      try {
        domains = parseDomains(opts.domains);
      } catch (err) {
        throw usageError((err as Error).message);
      }
    }
    const exceptions = exceptionsOf(opts.exceptions, warn);
    const root = sessionsRootOf({ flag: opts.sessionsDir, settings, home: ctx.home });
    const target = opts.upload ? targetOf(opts, ctx, settings) : undefined;
    // Without --upload the portal, when one is configured with a key, still holds the triage to start from.
    const statePortal = target ?? configuredPortal(opts, ctx, settings);
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
      allowInsecureHttp: opts.allowInsecureHttp,
    });

    const vulnIndex = await vulnIndexForRun(statePortal, { home: ctx.home, warn, info: (m) => out.info(m) });
    const tty = ctx.streams.stderr.isTTY === true;
    let scan: Awaited<ReturnType<typeof runScan>>;
    try {
      scan = await runScan(
        {
          targets,
          profile,
          ports: opts.ports,
          privileged: process.getuid?.() === 0,
          nmapPath,
          root,
          exceptions,
          settings,
          license,
          upload: target,
          portal: statePortal,
          tools: opts.tools ? EXTERNAL_TOOLS : [],
          domains,
          vulnIndex,
          statsEverySeconds: statsEvery,
        },
        {
          now: ctx.now,
          env: ctx.env,
          info: (m) => out.info(m),
          warn,
          onStage: opts.progressJson ? stageJsonWriter(ctx.streams.stderr) : undefined,
          onProgress: opts.progressJson
            ? progressJsonWriter(ctx.streams.stderr)
            : tty
              ? (p) => out.info(`nmap: ${p.task} ${p.percent}%`)
              : undefined,
        },
      );
    } catch (err) {
      if (err instanceof NmapFailedError || err instanceof ScanUploadError) throw new CliError(err.message);
      throw err;
    }
    const { upload } = scan;
    if (opts.json) return out.json({ path: scan.path, session_id: scan.id, summary: scan.doc.summary, upload });
    out.print(scan.path);
    out.info(scanSummaryLine(scan.id, scan.doc.summary));
    if (upload) {
      out.print(`Uploaded session ${upload.session_id}; ${shareLinkText(upload.share_url)}`);
      const merged = findingsOfRecordLine(upload.findings);
      if (merged !== null) out.info(merged);
    }
  });
}
