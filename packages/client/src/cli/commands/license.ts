import type { Command } from 'commander';
import { licenseCacheFile } from '../../kit/license/cache.ts';
import { GATED_FEATURES, featureAllowed } from '../../kit/license/gates.ts';
import { licenseState } from '../../kit/license/service.ts';
import { timeoutOf } from '../../kit/portal/target.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, type CommonOpts } from '../options.ts';
import { Output } from '../output.ts';

interface StatusOpts extends CommonOpts {
  json?: boolean;
}

const BASIS_TEXT: Record<string, string> = {
  'no-key': 'no license key found',
  online: 'checked with the portal now',
  cache: 'cached portal answer (fresh)',
  grace: 'portal unreachable: cached tier within the grace period',
  'grace-ended': 'portal unreachable past the grace period',
  expired: 'the key has expired',
  format: 'not checked online: tier from the key format',
};

export default function register(program: Command, ctx: CliContext): void {
  const license = program.command('license').description('license key and tier of this host');
  const status = license
    .command('status')
    .description('resolve the license key, check it with the portal (once, cached 24 h) and print the tier')
    .option('-u, --url <url>', 'portal upload URL or origin; default CONSULTATION_API_URL')
    .option('-k, --key <key>', 'check this key instead of the configured one')
    .option('--timeout <sec>', 'request timeout in seconds', '30')
    .option(
      '--allow-insecure-http',
      'accept plain http to a portal on another machine (default SVC_ALLOW_INSECURE_HTTP)',
    )
    .option('--json', 'print the state as JSON (SVC_LICENSED, SVC_LICENSE_TIER, SVC_LICENSE_SOURCE and the rest)');
  configOption(status);
  status.addHelpText(
    'after',
    '\nNever prints the key: only its SHA-256 fingerprint prefix. Exit 0 whatever the tier; 2 on a configuration error.',
  );
  status.action(async (opts: StatusOpts) => {
    const out = new Output(ctx.streams);
    const settings = settingsOf(opts, ctx);
    const state = await licenseState({
      settings,
      home: ctx.home,
      now: ctx.now,
      warn: (m) => out.warn(m),
      timeoutS: timeoutOf(opts.timeout),
      keyOverride: opts.key,
      urlOverride: opts.url,
      allowInsecureHttp: opts.allowInsecureHttp,
    });
    const features = Object.fromEntries(GATED_FEATURES.map((f) => [f, featureAllowed(state.tier, f)]));
    if (opts.json) {
      return out.json({
        SVC_LICENSED: state.licensed,
        SVC_LICENSE_TIER: state.tier,
        SVC_LICENSE_SOURCE: state.source ?? '',
        ...state,
        features,
        cache_file: licenseCacheFile(ctx.home),
      });
    }
    const c = out.out;
    out.print(`Licensed:    ${state.licensed ? c.green('yes') : c.yellow('no')}`);
    out.print(`Tier:        ${state.tier === '' ? 'community' : c.bold(state.tier)}`);
    out.print(`Key source:  ${state.source ?? '-'}`);
    out.print(`Fingerprint: ${state.fingerprint ?? '-'}`);
    out.print(`Basis:       ${BASIS_TEXT[state.basis]}`);
    if (state.valid !== null)
      out.print(
        `Portal says: ${state.valid ? 'valid' : `not valid (${state.reason})`}${state.validated_at ? ` at ${state.validated_at}` : ''}`,
      );
    if (state.expires_at !== null) out.print(`Expires:     ${state.expires_at}`);
    if (state.unreachable !== null) out.print(`Online check: ${state.unreachable}`);
    out.print(
      `Features:    ${Object.entries(features)
        .map(([f, ok]) => (ok ? c.green(f) : c.dim(`${f} (needs business)`)))
        .join(', ')}`,
    );
  });
}
