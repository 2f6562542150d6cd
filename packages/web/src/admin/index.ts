import type { Section } from '../sections.ts';
import { AuditPage } from './audit-page.tsx';
import { DbHealthPage } from './db-health-page.tsx';
import { LicensesPage } from './licenses-page.tsx';
import { UsersPage } from './users-page.tsx';
import { WebhooksPage } from './webhooks-page.tsx';

/** The administration sections. */
export const adminSections: Section[] = [
  { path: '/console/licenses', label: 'Licenses', component: LicensesPage },
  { path: '/console/users', label: 'Users', component: UsersPage },
  { path: '/console/webhooks', label: 'Webhooks', component: WebhooksPage },
  { path: '/console/audit', label: 'Audit', component: AuditPage },
  { path: '/console/health', label: 'Health', component: DbHealthPage },
];
