import type { Command } from 'commander';
import { FORMATS, type ForeignFormat } from '../../imports/common.ts';
import { DEFAULT_MAX_BYTES, ImportError } from '../../imports/guard.ts';
import { runImport } from '../../imports/run-import.ts';
import { type ImportTarget, parseTargets } from '../../imports/targets.ts';
import { licenseState } from '../../kit/license/service.ts';
import type { PortalTarget } from '../../kit/portal/target.ts';
import { vulnIndexForRun } from '../../cve-match/vuln-index-cache.ts';
import { sessionsRootOf } from '../../kit/session-dir/root.ts';
import { findingsOfRecordLine } from '../../upload/outcome.ts';
import { ScanUploadError } from '../../upload/produced-upload.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, targetOf, targetOptions, type CommonOpts } from '../options.ts';
import { CliError, Output, shareLinkText, usageError } from '../output.ts';
import { configuredPortal, exceptionsOf } from './scan.ts';

interface ImportOpts extends CommonOpts {
  format: string;
  target?: string;
  targets?: string;
  upload?: boolean;
  sessionsDir?: string;
  exceptions?: string;
  json?: boolean;
  maxSize?: string;
}

/** `--max-size` in MiB (1 to 65536), the default 512. */
function maxBytesOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_MAX_BYTES;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65_536)
    throw usageError(`--max-size must be a whole number of MiB from 1 to 65536, not "${value}"`);
  return n * 1024 * 1024;
}

/**
 * Imports one foreign file and reports it the way `svc scan` does; shared with `svc upload`
 * given a foreign file. ImportError becomes exit 2 (not a file to import) or 1 (refused).
 */
export async function importAndReport(
  file: string,
  opts: {
    format: ForeignFormat | 'auto';
    target?: string | undefined;
    targets?: readonly ImportTarget[] | undefined;
    maxBytes: number;
    sessionsDir?: string | undefined;
    exceptions?: string | undefined;
    json?: boolean | undefined;
    upload?: PortalTarget | undefined;
    portal?: PortalTarget | undefined;
    common: CommonOpts;
  },
  ctx: CliContext,
): Promise<void> {
  const out = new Output(ctx.streams);
  const warn = (m: string) => out.warn(m);
  const settings = settingsOf(opts.common, ctx);
  const exceptions = exceptionsOf(opts.exceptions, warn);
  const root = sessionsRootOf({ flag: opts.sessionsDir, settings, home: ctx.home });
  const license = await licenseState({
    settings,
    home: ctx.home,
    now: ctx.now,
    warn,
    timeoutS: opts.upload?.timeoutS ?? (Number(opts.common.timeout) || 30),
    keyOverride: opts.common.key,
    urlOverride: opts.upload?.uploadUrl ?? opts.common.url,
    allowInsecureHttp: opts.common.allowInsecureHttp,
  });
  const vulnIndex = await vulnIndexForRun(opts.portal ?? opts.upload, {
    home: ctx.home,
    warn,
    info: (m) => out.info(m),
  });
  let result: Awaited<ReturnType<typeof runImport>>;
  try {
    result = await runImport(
      {
        file,
        format: opts.format,
        target: opts.target,
        targets: opts.targets,
        maxBytes: opts.maxBytes,
        root,
        exceptions,
        settings,
        license,
        upload: opts.upload,
        portal: opts.portal ?? opts.upload,
        vulnIndex,
      },
      { now: ctx.now, info: (m) => out.info(m), warn },
    );
  } catch (err) {
    if (err instanceof ImportError) throw new CliError(err.message, err.kind === 'usage' ? 'usage' : 'failed');
    if (err instanceof ScanUploadError) throw new CliError(err.message);
    throw err;
  }
  const { upload } = result;
  if (opts.json)
    return out.json({
      path: result.path,
      session_id: result.id,
      format: result.format,
      summary: result.doc.summary,
      checks: result.checks,
      upload,
    });
  out.print(result.path);
  const s = result.doc.summary;
  out.info(
    `Session ${result.id} (${result.format}): ${s?.total_findings ?? 0} findings on ${s?.total_hosts ?? 0} hosts, risk ${s?.risk_score ?? 0} (${s?.risk_grade ?? '-'})`,
  );
  if (upload) {
    out.print(`Uploaded session ${upload.session_id}; ${shareLinkText(upload.share_url)}`);
    const merged = findingsOfRecordLine(upload.findings);
    if (merged !== null) out.info(merged);
  }
}

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('import')
    .description(
      "turn another scanner's results (nmap XML, Nessus v1/v2, Greenbone/OpenVAS XML or CSV, Nuclei JSON lines or array) into a session",
    )
    .argument('<file>', 'the file to import')
    .option('--format <name>', `auto, ${FORMATS.join(', ')}`, 'auto')
    .option(
      '--target <name>',
      'the scan target remediation tracks across imports; default from the file, else its hosts',
    )
    .option(
      '--targets <list>',
      'Nuclei: what the run was pointed at (URLs, host:port or hosts, comma-separated); covered, so an empty file is a clean run',
    )
    .option('--upload', 'upload the session to the portal afterwards')
    .option('--sessions-dir <dir>', 'sessions root; default SVC_SESSIONS_DIR, ~/.svc/sessions')
    .option('--exceptions <file>', 'risk exceptions file (JSON)')
    .option('--max-size <MiB>', 'largest file read, in MiB (default 512)')
    .option('--json', 'print {path, session_id, format, summary, checks, upload} as JSON');
  configOption(cmd);
  targetOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nReads the file in chunks and refuses XML with entity declarations or an external DTD, files over the\n' +
      'size limit, deep nesting and cut-short files. Writes <sessions root>/<YYYYMMDD_HHMMSS>/ like `svc scan`.\n' +
      'An empty file is Nuclei output of a run without results: give --targets to import it as a clean run.\n' +
      'docs/cli/import.md has the formats and their mapping. Exit 0 done; 1 refused, or the upload failed; 2 usage.',
  );
  cmd.action(async (file: string, opts: ImportOpts) => {
    if (opts.format !== 'auto' && !(FORMATS as readonly string[]).includes(opts.format))
      throw usageError(`unknown format "${opts.format}": use auto, ${FORMATS.join(', ')}`);
    const maxBytes = maxBytesOf(opts.maxSize);
    let targets: ImportTarget[] | undefined;
    try {
      targets = opts.targets === undefined ? undefined : parseTargets(opts.targets);
    } catch (err) {
      if (err instanceof ImportError) throw usageError(err.message);
      throw err;
    }
    const settings = settingsOf(opts, ctx);
    const upload = opts.upload ? targetOf(opts, ctx, settings) : undefined;
    await importAndReport(
      file,
      {
        format: opts.format as ForeignFormat | 'auto',
        target: opts.target,
        targets,
        maxBytes,
        sessionsDir: opts.sessionsDir,
        exceptions: opts.exceptions,
        json: opts.json,
        upload,
        // Without --upload the portal, when one is configured with a key, still holds the triage to start from.
        portal: upload ?? configuredPortal(opts, ctx, settings),
        common: opts,
      },
      ctx,
    );
  });
}
