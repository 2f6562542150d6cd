import type { App, AppContext } from '../context.ts';
import auditList from './audit/list.ts';
import healthGet from './health/get.ts';
import licenseGet from './license/get.ts';
import licensesCreate from './licenses/create.ts';
import licensesDelete from './licenses/delete.ts';
import licensesList from './licenses/list.ts';
import licensesUpdate from './licenses/update.ts';

/** Every /api operation, one per file. Only registration happens here. */
export function registerApiRoutes(app: App, ctx: AppContext): void {
  for (const route of [healthGet, licenseGet, licensesList, licensesCreate, licensesUpdate, licensesDelete, auditList]) route(app, ctx);
}
