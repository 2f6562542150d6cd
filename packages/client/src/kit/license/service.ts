import type { Settings } from '../config/settings.ts';
import { createPortalClient } from '../portal/client.ts';
import { PortalError } from '../portal/errors.ts';
import { type PortalTarget, transportPolicyOf, uploadUrlOf } from '../portal/target.ts';
import { licenseCacheFile } from './cache.ts';
import { resolveKey } from '../config/license-key.ts';
import {
  answerFrom,
  DEFAULT_GRACE_S,
  DEFAULT_TTL_S,
  resolveTier,
  type LicenseState,
  type OnlineAnswer,
} from './tier.ts';

export interface LicenseContext {
  settings: Settings;
  home: string;
  now: () => Date;
  warn: (message: string) => void;
  timeoutS: number;
  /** A key given on the command line (`-k`) replaces the resolution order. */
  keyOverride?: string | undefined;
  urlOverride?: string | undefined;
  /** `--allow-insecure-http`: plain http to a portal on another machine (else SVC_ALLOW_INSECURE_HTTP decides). */
  allowInsecureHttp?: boolean | undefined;
}

/** GET /api/license once; every failure to get a well-formed 200 is "cannot tell". */
export function onlineValidator(
  target: Pick<PortalTarget, 'uploadUrl' | 'timeoutS'>,
): (key: string) => Promise<OnlineAnswer> {
  return async (key) => {
    try {
      const result = await createPortalClient({ target: { ...target, apiKey: key, jwt: null } }).license();
      return answerFrom(200, result);
    } catch (err) {
      if (!(err instanceof PortalError)) throw err;
      // Same reasons as answerFrom gives for a raw answer: the status, or the body.
      if (err.kind === 'http') return answerFrom(err.status ?? 0, undefined);
      if (err.kind === 'invalid_answer') return { kind: 'cannot-tell', why: 'the portal answered an unexpected body' };
      return { kind: 'cannot-tell', why: err.message };
    }
  };
}

/** The license state of this run: key resolution, format, cache and one online check. */
export async function licenseState(ctx: LicenseContext): Promise<LicenseState> {
  const key =
    ctx.keyOverride !== undefined && ctx.keyOverride !== ''
      ? { key: ctx.keyOverride, source: 'flag:-k' as const }
      : resolveKey(ctx.settings, ctx.home, ctx.warn);
  const rawUrl = ctx.urlOverride ?? ctx.settings.get('CONSULTATION_API_URL');
  const validateOnline =
    rawUrl === undefined
      ? null
      : onlineValidator({
          uploadUrl: uploadUrlOf(rawUrl, transportPolicyOf(ctx.settings, ctx.allowInsecureHttp)),
          timeoutS: ctx.timeoutS,
        });
  return resolveTier({
    key,
    cacheFile: licenseCacheFile(ctx.home),
    now: ctx.now,
    ttlS: ctx.settings.seconds('SVC_LICENSE_TTL_SECONDS', DEFAULT_TTL_S, 0),
    graceS: ctx.settings.seconds('SVC_LICENSE_GRACE_SECONDS', DEFAULT_GRACE_S, 0),
    validateOnline,
    warn: ctx.warn,
  });
}
