import { Option, type Command } from 'commander';
import { Settings } from '../kit/config/settings.ts';
import { resolveTarget, type PortalTarget } from '../kit/portal/target.ts';
import type { CliContext } from './context.ts';
import { Output } from './output.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `-c <file>`: a KEY=VALUE config file; may be given more than once (later files win). */
export function configOption(cmd: Command, opts: { required?: boolean } = {}): Command {
  const option = new Option(
    '-c, --config <file>',
    opts.required
      ? 'config file of KEY=VALUE lines (required)'
      : 'config file of KEY=VALUE lines (repeatable; later files win)',
  ).argParser(collect);
  if (opts.required) option.makeOptionMandatory();
  return cmd.addOption(option);
}

/** `-u`, `-k`, `-j`, `--timeout`: where the portal is and how to authenticate. */
export function targetOptions(cmd: Command): Command {
  return cmd
    .option('-u, --url <url>', 'portal upload URL (…/api/upload) or origin; default CONSULTATION_API_URL')
    .option(
      '-k, --key <key>',
      'license key; default SVC_LICENSE_KEY, SVC_API_KEY, CONSULTATION_API_KEY, ~/.svc/license.key',
    )
    .option('-j, --jwt <jwt>', 'admin identity token; default SVC_JWT, CONSULTATION_JWT')
    .option('--timeout <sec>', 'request timeout in seconds', '30')
    .option(
      '--allow-insecure-http',
      'accept plain http to a portal on another machine (default SVC_ALLOW_INSECURE_HTTP)',
    );
}

export interface CommonOpts {
  config?: string[] | undefined;
  url?: string;
  key?: string;
  jwt?: string;
  timeout?: string;
  allowInsecureHttp?: boolean;
}

export function settingsOf(opts: CommonOpts, ctx: CliContext): Settings {
  return new Settings({ configFiles: opts.config ?? [], env: ctx.env });
}

export function targetOf(opts: CommonOpts, ctx: CliContext, settings = settingsOf(opts, ctx)): PortalTarget {
  return resolveTarget(
    settings,
    { url: opts.url, key: opts.key, jwt: opts.jwt, timeout: opts.timeout, allowInsecureHttp: opts.allowInsecureHttp },
    { home: ctx.home, warn: (m) => new Output(ctx.streams).warn(m) },
  );
}
