import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import {
  CHECK_NAMES,
  checkProbes,
  cleanup,
  describeProbe,
  keyedDeleteProbe,
  runSmokeChecks,
  type CheckResult,
  type CleanupResult,
  type SmokeSetup,
  type SmokeState,
} from '../../smoke-test/checks.ts';
import { smokeSessionDoc, smokeSessionId } from '../../smoke-test/session-doc.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, targetOf } from '../options.ts';
import { CliError, Output, usageError } from '../output.ts';

interface SmokeOpts {
  config?: string[];
  cleanup: boolean;
  dryRun?: boolean;
  timeout: string;
  json?: boolean;
}

/**
 * `svc e2e-smoke-test` (tools/e2e_smoke_test.sh): ten pass/fail checks against a live
 * portal, one line each, then a summary. docs/cli/e2e_smoke_test.md says what each check
 * asserts; the checks live in smoke-test/checks.ts.
 */
export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('e2e-smoke-test')
    .description(
      'end-to-end smoke test of a portal: ten checks (health, auth, upload round-trip, share lookup, ...), PASS/FAIL each',
    )
    .option('--no-cleanup', 'keep the uploaded test session (default: delete it at the end)')
    .option('--dry-run', 'print the requests each check would send (secrets masked) and send nothing')
    .option('--timeout <sec>', 'timeout of each request in seconds', '30')
    .option('--json', 'print the results as JSON');
  configOption(cmd, { required: true });
  cmd.addHelpText(
    'after',
    `
The config file gives CONSULTATION_API_URL (the portal's upload URL or origin), the license key
(SVC_API_KEY, or the legacy CONSULTATION_API_KEY) and optionally SVC_JWT (admin identity token).

Checks, in order: ${CHECK_NAMES.join(', ')}.
The test uploads one generated session (id YYYYMMDD_HHMMSS_smoke-<hex>) and deletes it at the end
unless --no-cleanup is given; a failed cleanup fails the run.

Exit 0 all checks passed; 1 a check or the cleanup failed; 2 usage or configuration error.
`,
  );
  cmd.action(async (opts: SmokeOpts) => {
    const out = new Output(ctx.streams);
    const settings = settingsOf(opts, ctx);
    const target = targetOf({ config: opts.config, timeout: opts.timeout }, ctx, settings);
    if (target.apiKey === null)
      throw usageError(
        `No API key: set SVC_API_KEY (or CONSULTATION_API_KEY) in ${opts.config?.join(', ') ?? 'the config file'}`,
      );

    const now = ctx.now();
    const sessionId = smokeSessionId(now);
    const refusedSessionId = smokeSessionId(now);
    const bogusKey = `svc_pro_${randomBytes(32).toString('hex')}`;
    const portal = new URL(target.uploadUrl).origin;

    if (opts.dryRun) {
      const setup: SmokeSetup = {
        target,
        timeoutS: target.timeoutS,
        sessionId,
        sessionFile: '<generated session_results.json>',
        refusedSessionId,
        refusedSessionFile: '<generated session_results.json>',
        bogusKey,
      };
      const plan = checkProbes(setup).map((c) => ({ name: c.name, requests: c.probes.map(describeProbe) }));
      const cleanupPlan = opts.cleanup ? describeProbe(keyedDeleteProbe(setup)) : null;
      if (opts.json)
        return out.json({
          dry_run: true,
          portal: target.uploadUrl,
          session_id: sessionId,
          timeout_seconds: target.timeoutS,
          checks: plan,
          cleanup: cleanupPlan,
        });
      out.print(`Dry run against ${target.uploadUrl} (timeout ${target.timeoutS} s per request); nothing is sent.`);
      for (const check of plan) for (const request of check.requests) out.print(`${check.name}: ${request}`);
      out.print(cleanupPlan === null ? 'cleanup: skipped (--no-cleanup)' : `cleanup: ${cleanupPlan}`);
      out.print(`${plan.length} checks would run.`);
      return;
    }

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-smoke-'));
    try {
      const version = program.version() ?? 'unknown';
      const write = (id: string) => {
        const file = path.join(dir, `${id}.json`);
        fs.writeFileSync(file, `${JSON.stringify(smokeSessionDoc(id, now, version), null, 2)}\n`);
        return file;
      };
      const setup: SmokeSetup = {
        target,
        timeoutS: target.timeoutS,
        sessionId,
        sessionFile: write(sessionId),
        refusedSessionId,
        refusedSessionFile: write(refusedSessionId),
        bogusKey,
      };
      const state: SmokeState = { upload: null, stored: new Set(), unreachable: null };

      if (!opts.json)
        out.info(`Smoke test of ${portal}: session ${sessionId}, timeout ${target.timeoutS} s per request`);
      const results = await runSmokeChecks(setup, state, (r) => {
        if (!opts.json) out.print(lineOf(out, r));
      });

      let cleaned: CleanupResult;
      if (!opts.cleanup) {
        cleaned = {
          status: 'kept',
          message:
            state.stored.size > 0
              ? `skipped (--no-cleanup); session ${[...state.stored].join(', ')} kept`
              : 'skipped (--no-cleanup)',
        };
      } else {
        cleaned = await cleanup(setup, state);
      }
      const passed = results.filter((r) => r.passed).length;
      const failed = results.length - passed;
      const ok = failed === 0 && cleaned.status !== 'failed';

      if (opts.json) {
        out.json({
          portal: target.uploadUrl,
          session_id: sessionId,
          checks: results,
          passed,
          failed,
          cleanup: cleaned,
          ok,
        });
      } else {
        out.print(
          cleaned.status === 'failed'
            ? `cleanup ${out.out.red('FAILED')}: ${cleaned.message}`
            : `cleanup: ${cleaned.message}`,
        );
        out.print(`${passed} passed, ${failed} failed`);
      }
      if (!ok) {
        const why = [
          failed > 0 ? `${failed} of ${results.length} checks failed` : '',
          cleaned.status === 'failed' ? 'cleanup failed' : '',
        ].filter((s) => s !== '');
        throw new CliError(`smoke test failed: ${why.join('; ')}`, 'failed');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

function lineOf(out: Output, r: CheckResult): string {
  return r.passed ? `${out.out.green('PASS')} ${r.name}` : `${out.out.red('FAIL')} ${r.name}: ${r.reason ?? 'failed'}`;
}
