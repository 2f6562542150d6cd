import type { Settings } from '../config/settings.ts';
import { HttpError, jsonOf, send } from '../http/request.ts';
import { endpoint, type PortalTarget, uploadUrlOf } from '../portal/target.ts';
import { licenseCacheFile } from './cache.ts';
import { resolveKey } from './resolve.ts';
import { answerFrom, DEFAULT_GRACE_S, DEFAULT_TTL_S, resolveTier, type LicenseState, type OnlineAnswer } from './tier.ts';

export interface LicenseContext {
  settings: Settings;
  home: string;
  now: () => Date;
  warn: (message: string) => void;
  timeoutS: number;
  /** A key given on the command line (`-k`) replaces the resolution order. */
  keyOverride?: string | undefined;
  urlOverride?: string | undefined;
}

/** GET /api/license once; every failure to get a well-formed 200 is "cannot tell". */
export function onlineValidator(target: Pick<PortalTarget, 'uploadUrl' | 'timeoutS'>): (key: string) => Promise<OnlineAnswer> {
  return async (key) => {
    try {
      const res = await send({ method: 'GET', url: endpoint({ ...target, apiKey: key, jwt: null }, 'license'), headers: { 'x-api-key': key } }, target.timeoutS * 1000);
      return answerFrom(res.status, jsonOf(res));
    } catch (err) {
      if (err instanceof HttpError) return { kind: 'cannot-tell', why: err.message };
      throw err;
    }
  };
}

/** The license state of this run: key resolution, format, cache and one online check. */
export async function licenseState(ctx: LicenseContext): Promise<LicenseState> {
  const key = ctx.keyOverride !== undefined && ctx.keyOverride !== '' ? { key: ctx.keyOverride, source: 'flag:-k' as const } : resolveKey(ctx.settings, ctx.home, ctx.warn);
  const rawUrl = ctx.urlOverride ?? ctx.settings.get('CONSULTATION_API_URL');
  const validateOnline = rawUrl === undefined ? null : onlineValidator({ uploadUrl: uploadUrlOf(rawUrl), timeoutS: ctx.timeoutS });
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
