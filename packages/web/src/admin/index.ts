import { h } from 'preact';
import type { Section } from '../sections.ts';
import { AuditPage } from './audit-page.tsx';
import { consoleClient } from '../api/client.ts';
import { DbHealthPage } from './db-health-page.tsx';
import { LicensesPage } from './licenses-page.tsx';
import { UsersPage } from './users-page.tsx';
import { WebhooksPage } from './webhooks-page.tsx';

const client = consoleClient;

/** The administration sections. */
export const adminSections: Section[] = [
  { path: '/console/licenses', label: 'Licenses', component: () => h(LicensesPage, { client }) },
  { path: '/console/users', label: 'Users', component: () => h(UsersPage, { client }) },
  { path: '/console/webhooks', label: 'Webhooks', component: () => h(WebhooksPage, { client }) },
  { path: '/console/audit', label: 'Audit', component: () => h(AuditPage, { client }) },
  { path: '/console/health', label: 'Health', component: () => h(DbHealthPage, { client }) },
];
