import readline from 'node:readline';
import type { Command } from 'commander';
import {
  detectPackageManager,
  installCommands,
  planInstall,
  renderCommand,
  runInstallCommand,
  type InstallPlan,
} from '../../host-checks/package-manager.ts';
import type { ManagerName } from '../../host-checks/installable.ts';
import { isCI, isRoot } from '../../host-checks/process.ts';
import { detectTools, missingOf, type Tier, type ToolSpec, type ToolStatus } from '../../host-checks/tools.ts';
import type { CliContext } from '../context.ts';
import { CliError, Output } from '../output.ts';

interface DependencyCheckOpts {
  json?: boolean;
}

const TIER_TITLE: Record<Tier, string> = { required: 'Required', core: 'Core', optional: 'Optional' };
const TIERS: Tier[] = ['required', 'core', 'optional'];

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('dependency-check')
    .description(
      'list the required (nmap), core and optional tools of the scanner and the capabilities skipped without them',
    )
    .option('--json', 'print the tools, what is missing and the skipped capabilities as JSON');
  cmd.addHelpText(
    'after',
    `
When nmap is missing and both standard input and output are a terminal (and CI is unset), offers to install it
("Install nmap now with <command>? [y/N]"). Under CI, cron or piped input it never asks: it exits 1 saying how to install.
Exit 0 when the required tools are present (missing core or optional tools only warn); 1 when one is missing; 2 usage.`,
  );
  cmd.action(async (opts: DependencyCheckOpts) => {
    const out = new Output(ctx.streams);
    let statuses = detectTools(ctx.env);
    const manager = detectPackageManager(ctx.env);
    if (!opts.json) printReport(out, statuses, manager?.name ?? null);

    let missingRequired = missingOf(statuses, 'required');
    if (missingRequired.length > 0) {
      const noPrompt = whyNoPrompt(ctx);
      const plan = await planInstall(missingRequired, {
        env: ctx.env,
        isRoot: isRoot(),
        interactive: noPrompt === null,
      });
      const how = howToInstall(plan);
      const ids = missingRequired.map((t) => t.id).join(', ');
      if (noPrompt !== null || plan.blocked !== null || plan.commands.length === 0) {
        if (opts.json) out.json(jsonReport(statuses, manager?.name ?? null, { prompted: false, installed: false }));
        throw new CliError(
          `${ids} is required but not installed; ${how}${noPrompt !== null ? ` (no prompt: ${noPrompt})` : ''}`,
        );
      }
      const commandLine = plan.commands.map(renderCommand).join(' && ');
      const answer = await ask(`Install ${ids} now with ${commandLine}? [y/N] `, ctx.streams.stderr);
      if (answer === null || !/^\s*y(es)?\s*$/i.test(answer)) {
        if (opts.json) out.json(jsonReport(statuses, manager?.name ?? null, { prompted: true, installed: false }));
        throw new CliError(`${ids} is required but not installed (install declined); ${how}`);
      }
      for (const command of plan.commands) {
        const r = await runInstallCommand(command, { env: ctx.env, output: ctx.streams.stderr, interactive: true });
        if (r.code !== 0)
          throw new CliError(
            `${renderCommand(command)} ${r.code === null ? `did not run: ${r.error ?? 'unknown error'}` : `exited with ${r.code}`}; ${ids} is still missing`,
          );
      }
      statuses = detectTools(ctx.env);
      missingRequired = missingOf(statuses, 'required');
      if (opts.json)
        out.json(
          jsonReport(statuses, manager?.name ?? null, { prompted: true, installed: missingRequired.length === 0 }),
        );
      if (missingRequired.length > 0)
        throw new CliError(
          `the install finished but ${missingRequired.map((t) => t.id).join(', ')} is still not on the PATH (${ctx.env['PATH'] ?? ''})`,
        );
      if (!opts.json)
        out.print(
          `${out.out.green('Installed')}: ${statuses
            .filter((s) => s.spec.tier === 'required')
            .map((s) => `${s.spec.id} (${s.path})`)
            .join(', ')}`,
        );
      return;
    }
    if (opts.json) out.json(jsonReport(statuses, manager?.name ?? null, null));
  });
}

/** Why no prompt may be shown, or null when it may (both ends a terminal, not CI). */
function whyNoPrompt(ctx: CliContext): string | null {
  if (isCI(ctx.env)) return `CI is set (CI=${ctx.env['CI']})`;
  if (!ctx.stdinIsTTY) return 'standard input is not a terminal';
  if (ctx.streams.stdout.isTTY !== true) return 'standard output is not a terminal';
  return null;
}

function howToInstall(plan: InstallPlan): string {
  if (plan.manager === null)
    return `${plan.blocked ?? 'no package manager found'} (${plan.items.map((i) => i.homepage ?? i.id).join(', ')})`;
  if (plan.commands.length === 0)
    return `${plan.manager.name} has no package for it: ${plan.items.map((i) => i.homepage ?? i.id).join(', ')}`;
  const commands = plan.commands.map(renderCommand).join(' && ');
  if (plan.blocked !== null) return `install it as root with: ${commands} (${plan.blocked})`;
  return `install it with: ${commands}`;
}

/** One line from the terminal; null at end of input. */
async function ask(question: string, output: NodeJS.WritableStream): Promise<string | null> {
  output.write(question);
  // CliContext has no stdin stream; prompts are only offered when process.stdin is the terminal.
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  try {
    return await new Promise<string | null>((resolve) => {
      rl.once('line', (line) => resolve(line));
      rl.once('close', () => resolve(null));
    });
  } finally {
    rl.close();
  }
}

/** "apt package dnsutils", "no apk package: <homepage>", or the homepage when there is no manager. */
function packageHint(spec: ToolSpec, manager: ManagerName | null): string {
  if (manager === null) return spec.homepage ?? 'no package manager found';
  const pkg = spec.packages[manager];
  if (pkg === null) return `no ${manager} package${spec.homepage ? `: ${spec.homepage}` : ''}`;
  return `${manager} package ${pkg}`;
}

/** One command (as root, or as the user for brew) installing the packaged ones of `tools`; null when none is packaged. */
function installLine(tools: ToolSpec[], manager: ManagerName | null): string | null {
  if (manager === null) return null;
  const packages = [...new Set(tools.map((t) => t.packages[manager]).filter((p): p is string => p !== null))];
  const command = installCommands(manager, packages, { privilege: { kind: manager === 'brew' ? 'user' : 'root' } }).at(
    -1,
  );
  return command === undefined ? null : renderCommand(command);
}

function printReport(out: Output, statuses: ToolStatus[], manager: ManagerName | null): void {
  const c = out.out;
  const width = Math.max(...statuses.map((s) => s.spec.id.length));
  for (const tier of TIERS) {
    out.print(c.bold(`${TIER_TITLE[tier]} tools`));
    for (const s of statuses.filter((x) => x.spec.tier === tier)) {
      const name = s.spec.id.padEnd(width);
      if (s.path !== null) out.print(`  ${c.green('ok     ')}  ${name}  ${s.path}`);
      else if (tier === 'optional') out.print(`  ${c.yellow('skipped')}  ${name}  ${s.spec.capability}`);
      else out.print(`  ${c.red('MISSING')}  ${name}  ${s.spec.capability} (${packageHint(s.spec, manager)})`);
    }
  }
  const required = missingOf(statuses, 'required');
  const core = missingOf(statuses, 'core');
  const optional = missingOf(statuses, 'optional');
  if (optional.length > 0) {
    out.print(
      c.bold(`Skipped capabilities (${optional.length} optional ${optional.length === 1 ? 'tool' : 'tools'} missing)`),
    );
    for (const t of optional) out.print(`  - ${t.capability} (${t.id}; ${packageHint(t, manager)})`);
    const line = installLine(optional, manager);
    if (line !== null) out.print(`  To add the packaged ones: ${line}`);
  }
  if (core.length > 0) out.warn(`core tools missing: ${core.map((t) => `${t.id} (${t.capability})`).join('; ')}`);
  const fixLine = installLine([...required, ...core], manager);
  if (required.length > 0 || core.length > 0)
    out.print(
      `${c.red('Missing')}: ${[...required, ...core].map((t) => `${t.id} (${t.tier})`).join(', ')}${fixLine !== null ? `; install with: ${fixLine}` : ''}`,
    );
  else
    out.print(
      `${c.green('Required and core tools present')}; ${optional.length} optional ${optional.length === 1 ? 'tool' : 'tools'} missing`,
    );
}

function jsonReport(
  statuses: ToolStatus[],
  manager: ManagerName | null,
  prompt: { prompted: boolean; installed: boolean } | null,
) {
  const missing = (tier: Tier) => missingOf(statuses, tier).map((t) => t.id);
  return {
    ok: missingOf(statuses, 'required').length === 0,
    package_manager: manager,
    tools: statuses.map((s) => ({
      name: s.spec.id,
      tier: s.spec.tier,
      present: s.path !== null,
      path: s.path,
      capability: s.spec.capability,
      package: manager === null ? null : s.spec.packages[manager],
    })),
    missing: { required: missing('required'), core: missing('core'), optional: missing('optional') },
    skipped_capabilities: missingOf(statuses, 'optional').map((t) => ({
      tool: t.id,
      capability: t.capability,
      package: manager === null ? null : t.packages[manager],
      homepage: t.homepage ?? null,
    })),
    install_commands: {
      required_and_core: installLine([...missingOf(statuses, 'required'), ...missingOf(statuses, 'core')], manager),
      optional: installLine(missingOf(statuses, 'optional'), manager),
    },
    ...(prompt === null ? {} : { install_prompt: prompt }),
  };
}
