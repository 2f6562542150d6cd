import type { FastifyRequest } from 'fastify';
import type { Permission } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { credentialsOf } from '../http/credentials.ts';
import { authenticateEither } from './authenticate.ts';
import { keyCallerOf } from './guards.ts';
import type { Principal } from './principal.ts';

/** The caller of a request accepting either credential (see authenticateEither); null when it presents none. */
export function resolveCredential(
  ctx: AppContext,
  request: FastifyRequest,
  permission?: Permission,
): Promise<Principal | null> {
  return authenticateEither(ctx, credentialsOf(request.headers), keyCallerOf(request), permission);
}
