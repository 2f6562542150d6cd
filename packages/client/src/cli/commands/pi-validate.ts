import os from 'node:os';
import type { Command } from 'commander';
import { CHECK_NAMES, type CheckResult, type HostContext } from '../../host-checks/check-result.ts';
import { describeChecks, fixItems, runHostChecks, summaryOf } from '../../host-checks/checks.ts';
import {
  detectPackageManager,
  installCommands,
  planInstall,
  renderCommand,
  runInstallCommand,
  unavailableHint,
  type InstallPlan,
} from '../../host-checks/package-manager.ts';
import { isCI, isRoot } from '../../host-checks/process.ts';
import { CRON, detectTools, missingOf } from '../../host-checks/tools.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, type CommonOpts } from '../options.ts';
import { CliError, Output } from '../output.ts';

interface PiValidateOpts extends CommonOpts {
  fix?: boolean;
  json?: boolean;
  dryRun?: boolean;
}

/** A check as printed by --json (the `fix` list stays internal). */
const publicCheck = (r: CheckResult) => ({ name: r.name, status: r.status, detail: r.detail });

interface FixReport {
  dry_run: boolean;
  manager: string | null;
  privilege: string | null;
  packages: string[];
  commands: { command: string; ran: boolean; exit_code: number | null; error?: string }[];
  blocked: string | null;
  /** Tools still missing from the PATH after the install. */
  still_missing: string[];
  ok: boolean;
}

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('pi-validate')
    .description('check that this host can run scans: platform, bash, dependencies, MD5, cron, disk space, network')
    .option(
      '--fix',
      'install missing required and core dependencies (and a too old bash) with the platform package manager, then check again',
    )
    .option('--json', 'print {checks:[{name,status,detail}], summary} as JSON')
    .option(
      '--dry-run',
      'alone: list what each check would do and run nothing; with --fix: run the checks and print the install commands without running them',
    );
  configOption(cmd);
  cmd.addHelpText(
    'after',
    `
Checks: ${CHECK_NAMES.join(', ')}.
The network check asks the portal's GET /api/health when CONSULTATION_API_URL is set (-c file or environment).
Exit 0 when no check fails (warnings allowed); 1 when a check fails or --fix could not install; 2 usage.`,
  );
  cmd.action(async (opts: PiValidateOpts) => {
    const out = new Output(ctx.streams);
    const settings = settingsOf(opts, ctx);
    const host: HostContext = {
      env: ctx.env,
      home: ctx.home,
      platform: process.platform,
      arch: os.machine(),
      settings,
    };
    const interactive = ctx.stdinIsTTY && !isCI(ctx.env);

    if (opts.dryRun && !opts.fix) {
      const plan = describeChecks(host);
      if (opts.json) return out.json({ dry_run: true, checks: plan });
      out.print('Dry run: the checks pi-validate would run (nothing is run, installed or contacted):');
      for (const p of plan) out.print(`  ${p.name.padEnd(NAME_WIDTH)}  ${p.probes}`);
      return;
    }

    const cronInstallHint = cronHint(ctx.env);
    const first = await runHostChecks(host, cronInstallHint === undefined ? {} : { cronInstallHint });
    if (!opts.fix) {
      if (opts.json) out.json({ checks: first.map(publicCheck), summary: summaryOf(first) });
      else printResults(out, first);
      return finish(first, null);
    }

    // --fix
    const items = fixItems(first);
    if (!opts.json) printResults(out, first);
    const fix: FixReport = {
      dry_run: opts.dryRun === true,
      manager: null,
      privilege: null,
      packages: [],
      commands: [],
      blocked: null,
      still_missing: [],
      ok: true,
    };
    let final = first;
    if (items.length === 0) {
      if (!opts.json) out.print(`\nFix: nothing to install (required and core tools present, bash 4 or later).`);
    } else {
      const plan = await planInstall(items, { env: ctx.env, isRoot: isRoot(), interactive });
      fix.manager = plan.manager?.name ?? null;
      fix.privilege = plan.privilege === null ? null : plan.privilege.kind;
      fix.packages = plan.packages;
      fix.blocked = plan.blocked;
      fix.commands = plan.commands.map((c) => ({ command: renderCommand(c), ran: false, exit_code: null }));
      if (!opts.json) printPlan(out, plan, fix.dry_run);
      if (plan.blocked !== null || plan.unavailable.length > 0) fix.ok = false;
      if (plan.blocked === null && !fix.dry_run && plan.commands.length > 0) {
        for (const [i, command] of plan.commands.entries()) {
          if (!opts.json) out.print(`$ ${renderCommand(command)}`);
          const r = await runInstallCommand(command, { env: ctx.env, output: ctx.streams.stderr, interactive });
          const entry = fix.commands[i]!;
          entry.ran = true;
          entry.exit_code = r.code;
          if (r.error !== undefined) entry.error = r.error;
          if (r.code !== 0) {
            fix.ok = false;
            out.error(
              `${renderCommand(command)} ${r.code === null ? `did not run: ${r.error ?? 'unknown error'}` : `exited with ${r.code}`}`,
            );
            break;
          }
        }
        final = await runHostChecks(host, cronInstallHint === undefined ? {} : { cronInstallHint });
        const wanted = new Set(items.map((i) => i.id));
        fix.still_missing = missingOf(detectTools(ctx.env))
          .filter((t) => wanted.has(t.id))
          .map((t) => t.id);
        if (fix.still_missing.length > 0) fix.ok = false;
        if (!opts.json) {
          if (fix.still_missing.length > 0)
            out.print(
              `\nStill not on the PATH after the install: ${fix.still_missing.join(', ')} (PATH=${ctx.env['PATH'] ?? ''})`,
            );
          out.print('\nAfter --fix:');
          printResults(out, final);
        }
      }
    }
    if (opts.json)
      out.json({
        checks: final.map(publicCheck),
        summary: summaryOf(final),
        fix: { ...fix, initial: { checks: first.map(publicCheck), summary: summaryOf(first) } },
      });
    else if (!fix.dry_run) printOptionalHint(out, ctx.env);
    return finish(final, fix);
  });
}

const NAME_WIDTH = Math.max(...CHECK_NAMES.map((n) => n.length));

function printResults(out: Output, results: CheckResult[]): void {
  const c = out.out;
  const label = { pass: c.green('PASS'), warn: c.yellow('WARN'), fail: c.red(c.bold('FAIL')) };
  for (const r of results) out.print(`${label[r.status]}  ${r.name.padEnd(NAME_WIDTH)}  ${r.detail}`);
  const s = summaryOf(results);
  out.print(
    `${s.total} checks: ${s.pass} passed, ${s.warn} ${s.warn === 1 ? 'warning' : 'warnings'}, ${s.fail} failed`,
  );
}

function printPlan(out: Output, plan: InstallPlan, dryRun: boolean): void {
  const ids = plan.items.map((i) => i.id).join(', ');
  out.print('');
  if (plan.manager === null) {
    out.print(`Fix: ${plan.blocked ?? 'no package manager'}`);
    return;
  }
  const how =
    plan.privilege?.kind === 'sudo'
      ? `through ${plan.privilege.nonInteractive ? 'sudo -n' : 'sudo'}`
      : plan.privilege?.kind === 'root'
        ? 'as root'
        : 'as this user';
  if (plan.unavailable.length > 0)
    out.print(`Fix: ${plan.manager.name} has no package for ${unavailableHint(plan.unavailable, plan.manager.name)}`);
  if (plan.commands.length === 0) return;
  if (plan.blocked !== null) {
    out.print(`Fix: cannot install ${ids} from here: ${plan.blocked}. The command to run:`);
    for (const c of plan.commands) out.print(`  ${renderCommand(c)}`);
    return;
  }
  if (dryRun) {
    out.print(`Fix (dry run): would install ${ids} with ${plan.manager.name} ${how} by running:`);
    for (const c of plan.commands) out.print(`  ${renderCommand(c)}`);
    out.print('Nothing was run.');
    return;
  }
  out.print(`Fix: installing ${ids} with ${plan.manager.name} ${how}:`);
}

/** Optional tools are never installed by --fix; say how to add the packaged ones. */
function printOptionalHint(out: Output, env: NodeJS.ProcessEnv): void {
  const manager = detectPackageManager(env);
  const missing = missingOf(detectTools(env), 'optional');
  if (manager === null || missing.length === 0) return;
  const packages = [...new Set(missing.map((t) => t.packages[manager.name]).filter((p): p is string => p !== null))];
  if (packages.length === 0) return;
  const [command] = installCommands(manager.name, packages, {
    privilege: { kind: manager.name === 'brew' ? 'user' : 'root' },
  }).slice(-1);
  if (command !== undefined)
    out.print(`\nOptional tools are not installed by --fix. To add the packaged ones: ${renderCommand(command)}`);
}

/** The command that would install crontab here, for the cron check's detail. */
function cronHint(env: NodeJS.ProcessEnv): string | undefined {
  const manager = detectPackageManager(env);
  const pkg = manager === null ? null : CRON.packages[manager.name];
  if (manager === null || pkg === null) return undefined;
  const [command] = installCommands(manager.name, [pkg], {
    privilege: { kind: manager.name === 'brew' ? 'user' : 'root' },
  }).slice(-1);
  return command === undefined ? undefined : renderCommand(command);
}

function finish(results: CheckResult[], fix: FixReport | null): void {
  const failed = results.filter((r) => r.status === 'fail');
  const why: string[] = [];
  if (failed.length > 0)
    why.push(`${failed.length} of ${results.length} checks failed: ${failed.map((r) => r.name).join(', ')}`);
  if (fix !== null && !fix.dry_run && !fix.ok)
    why.push(
      fix.blocked !== null
        ? `--fix could not install: ${fix.blocked}`
        : fix.still_missing.length > 0
          ? `--fix did not make ${fix.still_missing.join(', ')} available on the PATH`
          : '--fix failed',
    );
  if (why.length > 0) throw new CliError(why.join('; '));
}
