import type { CheckName, CheckResult, CheckStatus, HostContext } from './check-result.ts';
import type { Installable } from './installable.ts';
import { findProgram } from '../kit/process/find-program.ts';
import { detectTools, toolsOfTier } from './tools.ts';
import {
  bashFacts,
  bashRule,
  cronRule,
  type CronFacts,
  DISK_FAIL_BYTES,
  DISK_WARN_BYTES,
  diskFacts,
  diskRule,
  findCronDaemon,
  formatBytes,
  MD5_DIGEST,
  MD5_INPUT,
  MD5_TOOLS,
  md5Attempts,
  md5Rule,
  MIN_BASH_MAJOR,
  platformFacts,
  platformRule,
} from './checks-system.ts';
import { coreDependenciesRule, nmapRun, optionalDependenciesRule } from './checks-dependencies.ts';
import { networkRule, portalHealthUrl, portalProbe, routeFacts } from './checks-network.ts';

/**
 * The eight host readiness checks of pi_validate.sh. Each check gathers facts from the host
 * (probe) and hands them to a pure rule that decides pass/warn/fail and the one-line detail;
 * the rules are unit-tested, the probes are exercised by running the real tool. Rules and
 * probes live in checks-system.ts (platform, bash, MD5, cron, disk), checks-dependencies.ts
 * and checks-network.ts; this module runs them all. The rules are documented in
 * docs/cli/pi_validate.md.
 */

/** Runs the eight checks (concurrently; results in CHECK_NAMES order). Read-only: installs nothing. */
export async function runHostChecks(h: HostContext, opts: { cronInstallHint?: string } = {}): Promise<CheckResult[]> {
  const statuses = detectTools(h.env);
  const nmapPath = statuses.find((s) => s.spec.id === 'nmap')?.path ?? null;
  const [bash, nmap, md5, disk, portal, routes] = await Promise.all([
    bashFacts(h),
    nmapRun(nmapPath, h.env),
    md5Attempts(h.env),
    diskFacts(h),
    portalProbe(h),
    routeFacts(h),
  ]);
  const cron: CronFacts = {
    platform: h.platform,
    crontab: findProgram('crontab', h.env),
    daemon: h.platform === 'darwin' ? null : findCronDaemon(),
  };
  if (opts.cronInstallHint !== undefined) cron.installHint = opts.cronInstallHint;
  return [
    platformRule(platformFacts(h)),
    bashRule(bash),
    coreDependenciesRule(statuses, nmap),
    optionalDependenciesRule(statuses),
    md5Rule(md5),
    cronRule(cron),
    diskRule(disk),
    networkRule(portal, routes),
  ];
}

/** What each check would do, for `--dry-run`: only PATH lookups, no program run, nothing contacted. */
export function describeChecks(h: HostContext): { name: CheckName; probes: string }[] {
  const req = toolsOfTier('required').concat(toolsOfTier('core'));
  const bash = findProgram('bash', h.env) ?? 'bash';
  const md5 = MD5_TOOLS.map((t) => findProgram(t, h.env) ?? t);
  const health = portalHealthUrl(h.settings);
  const network =
    health === null
      ? 'CONSULTATION_API_URL not set: read the default route (/proc/net/route, /proc/net/ipv6_route) and /etc/resolv.conf; no request'
      : 'bad' in health
        ? `CONSULTATION_API_URL is malformed (${health.reason}): would fail`
        : `GET ${health.url} (timeout ${(h.networkTimeoutMs ?? 10_000) / 1000} s)`;
  return [
    {
      name: 'platform',
      probes: 'read the OS and architecture, /etc/os-release and /proc/device-tree/model (Raspberry Pi model)',
    },
    { name: 'bash version', probes: `run ${bash} -c 'echo $BASH_VERSION' (needs ${MIN_BASH_MAJOR}.0 or later)` },
    {
      name: 'core dependencies',
      probes: `look up ${req.map((t) => t.id).join(', ')} on the PATH; run nmap --version (nmap missing fails, a core tool missing warns)`,
    },
    {
      name: 'optional dependencies',
      probes: `look up ${toolsOfTier('optional')
        .map((t) => t.id)
        .join(', ')} on the PATH (missing ones warn as skipped capabilities)`,
    },
    { name: 'MD5 hashing', probes: `hash "${MD5_INPUT}" with ${md5.join(' or ')}, expect ${MD5_DIGEST}` },
    { name: 'cron', probes: 'look up crontab on the PATH and a running cron daemon in /proc' },
    {
      name: 'disk space',
      probes: `statfs ${h.home} (fail below ${formatBytes(DISK_FAIL_BYTES)} free, warn below ${formatBytes(DISK_WARN_BYTES)})`,
    },
    { name: 'network connectivity', probes: network },
  ];
}

/** The distinct installables the failing or warning checks ask --fix for. */
export function fixItems(results: CheckResult[]): Installable[] {
  const seen = new Set<string>();
  const items: Installable[] = [];
  for (const r of results) {
    for (const i of r.fix ?? []) {
      if (seen.has(i.id)) continue;
      seen.add(i.id);
      items.push(i);
    }
  }
  return items;
}

export function summaryOf(results: CheckResult[]): {
  total: number;
  pass: number;
  warn: number;
  fail: number;
  result: CheckStatus;
} {
  const count = (s: CheckStatus) => results.filter((r) => r.status === s).length;
  const fail = count('fail');
  const warn = count('warn');
  return {
    total: results.length,
    pass: count('pass'),
    warn,
    fail,
    result: fail > 0 ? 'fail' : warn > 0 ? 'warn' : 'pass',
  };
}
