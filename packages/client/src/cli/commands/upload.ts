import fs from 'node:fs';
import { UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import type { Command } from 'commander';
import { licenseState } from '../../kit/license/service.ts';
import { createPortalClient } from '../../kit/portal/client.ts';
import { PortalError } from '../../kit/portal/errors.ts';
import type { UploadFiles } from '../../kit/portal/requests.ts';
import { checkUploadSize } from '../../kit/portal/upload-size.ts';
import { attachBenchmark } from '../../upload/benchmark.ts';
import { findingsOfRecordLine, sessionTargetConflict } from '../../upload/outcome.ts';
import { applyPortalState } from '../../upload/prior-state.ts';
import { rendererFor } from '../../upload/render-again.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, targetOf, targetOptions, type CommonOpts } from '../options.ts';
import { CliError, Output, shareLinkText, usageError } from '../output.ts';
import { sessionDirFiles } from '../../session-dir/display-files.ts';
import { detectFormat } from '../../imports/detect.ts';
import { DEFAULT_MAX_BYTES } from '../../imports/guard.ts';
import { FORMATS } from '../../imports/common.ts';
import { sessionFileProblem } from '../../upload/session-file-check.ts';

interface UploadOpts extends CommonOpts {
  log?: string;
  report?: string;
  exec?: string;
  json?: boolean;
  benchmark?: boolean;
}

/** The refusal of a file `svc upload` does not take: the file, what is wrong with it, what was expected. */
const BLANK_MAX_BYTES = 64 * 1024;

/** Nothing but white space (the output of a Nuclei run without results, for one). */
function blankFile(file: string, size: number): boolean {
  return size <= BLANK_MAX_BYTES && fs.readFileSync(file, 'utf8').trim() === '';
}

function notASessionMessage(file: string, problem: string, fromDirectory: boolean): string {
  if (problem === 'is empty' && !fromDirectory)
    return (
      `${file} is empty: neither a session file nor a scan to import. An empty Nuclei output (a run without ` +
      `results) is imported as a clean run with \`svc import ${file} --targets <what it scanned> --upload\`; nothing was sent`
    );
  if (fromDirectory)
    return `${file} is not a session file: it ${problem}. Expected a JSON object with metadata.session_id (docs/session-file.md); nothing was sent`;
  return (
    `${file} is neither a session file nor a file svc imports: it ${problem}. Expected a session directory, ` +
    `session_results.json (a JSON object with metadata.session_id, docs/session-file.md) or a file \`svc import\` reads ` +
    `(${FORMATS.join(', ')}: docs/cli/import.md); nothing was sent`
  );
}

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('upload')
    .description(
      "upload a scan session (a session directory, or session_results.json with -l/-r/-e), or import another scanner's file and upload it",
    )
    .argument('<session>', 'session directory, session_results.json, or a file `svc import` reads')
    .option('-l, --log <file>', 'pipeline log')
    .option('-r, --report <file>', 'HTML report')
    .option('-e, --exec <file>', 'executive summary HTML')
    .option('--json', "print the portal's answer as JSON")
    .option('--no-benchmark', "of a session directory: skip fetching the portal's benchmark afterwards");
  configOption(cmd);
  targetOptions(cmd);
  cmd.addHelpText(
    'after',
    "\nPrints the session id and share URL. After a session directory's upload (business tier and above), the\nportal's benchmark is written into its session_results.json, both reports are rendered again with it and\nreplaced on the portal (PUT /api/refresh); a failure there only warns. An nmap XML, Nessus v1 or v2, Greenbone XML or CSV,\nor Nuclei output (JSON lines or array) is imported first, as `svc import --upload` does (docs/cli/import.md).\nAny other file that is not a session file (an empty one included) is refused on this host before anything is sent.\nExit 0 uploaded; 1 refused or unreachable; 2 usage, or a file that is no session and no format to import.",
  );
  cmd.action(async (session: string, opts: UploadOpts) => {
    const out = new Output(ctx.streams);
    const settings = settingsOf(opts, ctx);
    const target = targetOf(opts, ctx, settings);
    let files: UploadFiles;
    const stat = fs.statSync(session, { throwIfNoEntry: false });
    if (stat === undefined) throw usageError(`No such file or directory: ${session}`);
    // Another scanner's file (nmap, Nessus, Greenbone, Nuclei) is imported into a session, then uploaded.
    // An empty file would import as a clean Nuclei run, which needs the targets `svc import` takes.
    const foreign = stat.isFile() && !blankFile(session, stat.size) ? detectFormat(session) : null;
    if (foreign !== null) {
      if (opts.log !== undefined || opts.report !== undefined || opts.exec !== undefined)
        throw usageError(`${session} is a ${foreign} file to import: -l, -r and -e apply to session files only`);
      // The import command's code (its scanner, alerts and mail) loads for a foreign file only.
      const { importAndReport } = await import('./import.ts');
      return importAndReport(
        session,
        { format: foreign, maxBytes: DEFAULT_MAX_BYTES, json: opts.json, upload: target, common: opts },
        ctx,
      );
    }
    if (stat.isDirectory()) {
      const found = sessionDirFiles(session);
      if (found === null) throw usageError(`${session} has no session_results.json`);
      files = {
        session: found.session,
        log: opts.log ?? found.log,
        report: opts.report ?? found.report,
        exec: opts.exec ?? found.exec,
      };
    } else {
      files = { session, log: opts.log, report: opts.report, exec: opts.exec };
    }
    // Neither a session file nor a format to import: refused here, so the file never leaves the host.
    const problem = sessionFileProblem(files.session, target.uploadLimitBytes ?? UPLOAD_LIMIT_BYTES);
    if (problem !== null) throw usageError(notASessionMessage(files.session, problem, stat.isDirectory()));
    for (const f of [files.log, files.report, files.exec]) {
      if (f === undefined) continue;
      const st = fs.statSync(f, { throwIfNoEntry: false });
      if (st === undefined) throw usageError(`No such file: ${f}`);
      if (!st.isFile()) throw usageError(`Not a file: ${f}`);
    }
    // Over the portal's upload limit: refused before any request, the portal's triage included.
    await checkUploadSize(target, files);
    // A plain session directory starts from the portal's triage made since the scan
    // (docs/decisions.md#prior-state-from-the-portal).
    if (stat.isDirectory() && opts.report === undefined && opts.exec === undefined) {
      const changed = await applyPortalState({
        portal: target,
        sessionDir: session,
        files,
        settings,
        warn: (m) => out.warn(m),
      });
      if (changed) out.info("Remediation merged with the portal's latest state of the target; session files rewritten");
    }
    const client = createPortalClient({ target });
    let body: Awaited<ReturnType<typeof client.upload>>;
    try {
      body = await client.upload(files);
    } catch (err) {
      if (err instanceof PortalError && err.kind === 'http')
        throw new CliError(sessionTargetConflict(err, files.session) ?? `Upload refused: ${err.message}`, 'portal');
      throw err;
    }
    // Only a plain session directory: reports given with -r/-e are not the directory's to re-render.
    if (stat.isDirectory() && opts.benchmark !== false && opts.report === undefined && opts.exec === undefined) {
      const warn = (m: string) => out.warn(m);
      const { tier } = await licenseState({
        settings,
        home: ctx.home,
        now: ctx.now,
        warn,
        timeoutS: target.timeoutS,
        keyOverride: target.apiKey ?? undefined,
        urlOverride: target.uploadUrl,
        allowInsecureHttp: opts.allowInsecureHttp,
      });
      const step = await attachBenchmark({
        client,
        sessionDir: session,
        sessionId: body.session_id,
        tier,
        render: rendererFor(session, settings, warn),
        warn,
      });
      if (step.attached)
        out.info(`Benchmark written into the session; refreshed on the portal: ${step.refreshed.join(', ') || 'none'}`);
    }
    if (opts.json) return out.json(body);
    out.print(`Uploaded session ${out.out.bold(body.session_id)}`);
    const link = shareLinkText(body.share_url);
    out.print(link.charAt(0).toUpperCase() + link.slice(1));
    // What the portal made of it goes to stderr: stdout stays the id and the link scripts read.
    const merged = findingsOfRecordLine(body.findings);
    if (merged !== null) out.info(merged);
    out.info(`Portal: ${body.message}`);
  });
}
