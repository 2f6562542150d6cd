import { Type, type Static } from '@sinclair/typebox';
import { IsoDateTime } from './common.ts';

export const ENVIRONMENTS = ['production', 'deploy-preview', 'branch-deploy', 'dev'] as const;

export const HealthResponse = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String({ description: 'portal package version' }),
  timestamp: IsoDateTime,
  environment: Type.Union([...ENVIRONMENTS, 'unknown'].map((e) => Type.Literal(e))),
});
export type HealthResponse = Static<typeof HealthResponse>;

/** GET /readyz: the portal can serve requests (its database answers). */
export const ReadyResponse = Type.Object({ status: Type.Literal('ready') });
export type ReadyResponse = Static<typeof ReadyResponse>;
