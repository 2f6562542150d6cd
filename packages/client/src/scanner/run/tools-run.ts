import type { NmapHost } from '../parse/types.ts';
import { formatCommand } from '../nmap.ts';
import {
  type DiscoveryTool,
  type EnrichmentTool,
  type ExternalTool,
  runTool,
  type SourcedFinding,
  type ToolContext,
  type ToolInvocation,
  type ToolOutput,
} from '../tools/index.ts';
import { findProgram } from '../../kit/process/find-program.ts';

/** A tool found on this host, with the absolute path it runs from. */
export interface Installed<T extends ExternalTool> {
  tool: T;
  path: string;
}

export interface ToolRunOptions {
  ctx: ToolContext;
  wrapper?: readonly string[] | undefined;
  env: NodeJS.ProcessEnv;
  info: (message: string) => void;
  warn: (message: string) => void;
  /** Lines for pipeline.log (each tool's exact command, timing and exit). */
  log: (line: string) => void;
  /** Told the name of each tool that ran (the session's coverage lists them); a tool that could not start did not. */
  ran?: ((tool: string) => void) | undefined;
}

/** How many tool processes run at once: they share the host with nmap's last packets and the pipeline. */
const CONCURRENCY = 3;

/** The tools installed here, split by kind; each missing one is named once on stderr and in pipeline.log. */
export function installedTools(
  tools: readonly ExternalTool[],
  opts: Pick<ToolRunOptions, 'env' | 'info' | 'log'>,
): { discovery: Installed<DiscoveryTool>[]; enrichment: Installed<EnrichmentTool>[] } {
  const discovery: Installed<DiscoveryTool>[] = [];
  const enrichment: Installed<EnrichmentTool>[] = [];
  for (const tool of tools) {
    const path = findProgram(tool.binaries ?? [tool.name], opts.env);
    if (path === null) {
      const line = `${tool.name} not installed: skipped (${tool.capability}; Debian package ${tool.debianPackage})`;
      opts.info(line);
      opts.log(`tool ${line}`);
    } else if (tool.kind === 'discovery') discovery.push({ tool, path });
    else enrichment.push({ tool, path });
  }
  return { discovery, enrichment };
}

/** Runs one invocation; a failure to start is an output with the error, so no tool can fail the scan. */
async function invoke(
  installed: Installed<ExternalTool>,
  inv: ToolInvocation,
  opts: ToolRunOptions,
): Promise<ToolOutput | undefined> {
  const { tool, path } = installed;
  const command = [...(opts.wrapper ?? []), path, ...inv.args];
  opts.log(`tool ${tool.name} command ${formatCommand(command)}`);
  let out: ToolOutput;
  try {
    out = await runTool({
      path,
      args: inv.args,
      timeoutMs: tool.timeoutMs,
      wrapper: opts.wrapper,
      cwd: opts.ctx.workDir,
    });
  } catch (err) {
    const line = `${tool.name} ${inv.label}: could not run (${(err as Error).message})`;
    opts.warn(line);
    opts.log(`tool ${line}`);
    return undefined;
  }
  opts.ran?.(tool.name);
  const outcome = `${out.durationMs} ms, exit ${out.exitCode ?? 'none'}${out.timedOut ? ', timed out' : ''}`;
  opts.info(`${tool.name}: ${inv.label} (${outcome})`);
  opts.log(`tool ${tool.name} ${inv.label} ${outcome}`);
  if (out.timedOut)
    opts.warn(`${tool.name} ${inv.label}: timed out after ${tool.timeoutMs} ms; its partial output is used`);
  return out;
}

/** Runs `jobs` with at most `limit` at a time, keeping their order in the results. */
async function bounded<T>(jobs: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

export interface Discovered {
  /** The live addresses nmap then scans. */
  targets: string[];
  /** Their open TCP ports, as an nmap port list. */
  ports: string;
  /** The TCP ports the sweep probed on every target (DiscoveryTool.sweptPorts). */
  swept: string;
}

/**
 * The first discovery tool that wants these targets finds the live hosts and open ports, so nmap
 * scans only those. undefined when no tool ran or found anything: nmap then scans every target.
 */
export async function runDiscovery(
  tools: readonly Installed<DiscoveryTool>[],
  targets: readonly string[],
  opts: ToolRunOptions,
): Promise<Discovered | undefined> {
  const chosen = tools.find((t) => t.tool.wants(targets, opts.ctx));
  if (chosen === undefined) return undefined;
  const inv = chosen.tool.plan(targets, opts.ctx);
  const out = await invoke(chosen, inv, opts);
  if (out === undefined) return undefined;
  let live: { host: string; ports: number[] }[];
  try {
    live = chosen.tool.parse(out, opts.ctx);
  } catch (err) {
    opts.warn(`${chosen.tool.name}: output not understood (${(err as Error).message}); nmap scans every target`);
    return undefined;
  }
  const ports = [...new Set(live.flatMap((h) => h.ports))].sort((a, b) => a - b);
  if (live.length === 0 || ports.length === 0) {
    const line = `${chosen.tool.name} found no live host with an open port: nmap scans every target`;
    opts.info(line);
    opts.log(`tool ${line}`);
    return undefined;
  }
  const line = `${chosen.tool.name} found ${live.length} live hosts with ${ports.length} open TCP ports: nmap scans only those`;
  opts.info(line);
  opts.log(`tool ${line}`);
  return { targets: live.map((h) => h.host), ports: `T:${ports.join(',')}`, swept: chosen.tool.sweptPorts(opts.ctx) };
}

/**
 * One invocation and its findings, then the follow-ups the tool derives from its output (e.g.
 * smbclient reading each share a listing named), run one after another. Follow-ups never spawn
 * further follow-ups, so a tool cannot loop.
 */
async function invokeAndParse(
  installed: Installed<EnrichmentTool>,
  inv: ToolInvocation,
  opts: ToolRunOptions,
  lines: string[],
): Promise<SourcedFinding[]> {
  const { tool } = installed;
  const parsed = async (one: ToolInvocation): Promise<[SourcedFinding[], ToolOutput | undefined]> => {
    const out = await invoke(installed, one, opts);
    if (out === undefined) return [[], undefined];
    try {
      return [tool.parse(one, out, opts.ctx), out];
    } catch (err) {
      const line = `${tool.name} ${one.label}: output not understood (${(err as Error).message})`;
      opts.warn(line);
      lines.push(`tool ${line}`);
      return [[], out];
    }
  };
  const [findings, out] = await parsed(inv);
  if (out === undefined || tool.followUp === undefined) return findings;
  let next: ToolInvocation[];
  try {
    next = tool.followUp(inv, out, opts.ctx);
  } catch (err) {
    opts.warn(`${tool.name} ${inv.label}: could not plan its follow-up checks (${(err as Error).message})`);
    return findings;
  }
  for (const f of next) findings.push(...(await parsed(f))[0]);
  return findings;
}

/** Every enrichment tool on the hosts nmap found, at most CONCURRENCY processes at once; their findings in tool order. */
export async function runEnrichment(
  tools: readonly Installed<EnrichmentTool>[],
  hosts: readonly NmapHost[],
  opts: ToolRunOptions,
): Promise<SourcedFinding[]> {
  const jobs = tools.flatMap((installed) => {
    let plan: ToolInvocation[];
    try {
      plan = installed.tool.plan(hosts, opts.ctx);
    } catch (err) {
      opts.warn(`${installed.tool.name}: could not plan its checks (${(err as Error).message})`);
      return [];
    }
    if (plan.length === 0) opts.log(`tool ${installed.tool.name} nothing to check`);
    return plan.map((inv) => async (): Promise<{ findings: SourcedFinding[]; lines: string[] }> => {
      // Each invocation's lines stay together in pipeline.log, in plan order, whatever ran first.
      const lines: string[] = [];
      const own = { ...opts, log: (line: string) => lines.push(line) };
      const findings = await invokeAndParse(installed, inv, own, lines);
      return { findings, lines };
    });
  });
  const done = await bounded(jobs, CONCURRENCY);
  for (const line of done.flatMap((d) => d.lines)) opts.log(line);
  return done.flatMap((d) => d.findings);
}
