import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost } from '../parse/types.ts';

/**
 * An optional tool that `svc scan` uses when it is installed. Tools never replace nmap's checks:
 * they add findings (named with the tool as their source) or, for discovery, narrow what nmap scans.
 */
interface ToolBase {
  /** The binary's name, as tools/dependency_check.sh lists it (e.g. "testssl.sh"). */
  name: string;
  /** The names to look for on PATH, first found wins; `[name]` when absent (Debian installs testssl.sh as `testssl`). */
  binaries?: readonly string[] | undefined;
  /** The Debian package that installs it. */
  debianPackage: string;
  /** One line: what the scan gains with it (dependency_check.sh and the docs show it). */
  capability: string;
  /** Whole-run limit per invocation. */
  timeoutMs: number;
}

/** One invocation: a fixed argument list built from validated scan data, never from a shell. */
export interface ToolInvocation {
  /** Arguments after the binary; every value in them comes from nmap's parsed output or a validated target. */
  args: string[];
  /** What this invocation looks at, for pipeline.log (e.g. "10.0.0.5:443"). */
  label: string;
  host?: string | undefined;
  port?: number | undefined;
  service?: string | undefined;
}

export interface ToolOutput {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
}

export interface ToolContext {
  scanTime: Date;
  /** Directory for a tool's own output files (e.g. testssl.sh --jsonfile); removed after the scan. */
  workDir: string;
  privileged: boolean;
  /** DNS names the user named with `svc scan --domains` (validated), for DNS checks such as zone transfer, SPF, DMARC. */
  domains: readonly string[];
  /** The scan's nmap port list (`T:…,U:…`, from the profile or a validated `--ports`), for discovery tools. */
  ports?: string | undefined;
}

/** Runs after nmap on the hosts it found: each invocation's output becomes findings. */
export interface EnrichmentTool extends ToolBase {
  kind: 'enrichment';
  /** The invocations this scan needs (empty when no host runs a service the tool checks). */
  plan(hosts: readonly NmapHost[], ctx: ToolContext): ToolInvocation[];
  /**
   * Invocations that one invocation's output calls for (smbclient: one per share its listing
   * named), run once each after it; their output goes to `parse` like any other. Never chained further.
   */
  followUp?(invocation: ToolInvocation, output: ToolOutput, ctx: ToolContext): ToolInvocation[];
  /** Findings from one invocation; each carries `source: <tool name>`. */
  parse(invocation: ToolInvocation, output: ToolOutput, ctx: ToolContext): SourcedFinding[];
}

/** Runs before nmap on large target ranges: returns the live hosts (and open ports) nmap then scans. */
export interface DiscoveryTool extends ToolBase {
  kind: 'discovery';
  /** Whether this target list is worth a discovery pass (e.g. more than 256 addresses, root only). */
  wants(targets: readonly string[], ctx: ToolContext): boolean;
  plan(targets: readonly string[], ctx: ToolContext): ToolInvocation;
  /** Live addresses with their open TCP ports. */
  parse(output: ToolOutput, ctx: ToolContext): { host: string; ports: number[] }[];
  /**
   * The TCP ports its sweep probed on every target (a port list without prefixes). nmap then
   * scans only the open ones, yet a port the sweep found closed was looked at: the session's
   * coverage counts it, so a weakness whose port was closed is resolved, not left unchecked.
   */
  sweptPorts(ctx: ToolContext): string;
}

export type ExternalTool = EnrichmentTool | DiscoveryTool;

/** A finding with the tool that reported it; `sources` lists every one when several saw the same weakness. */
export type SourcedFinding = ScanFinding & { source?: string | undefined; sources?: string[] | undefined };
