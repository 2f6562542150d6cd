import { h } from 'preact';
import type { Section } from '../sections.ts';
import { AuditPage } from './AuditPage.tsx';
import { consoleClient } from '../api/client.ts';
import { DbHealthPage } from './DbHealthPage.tsx';
import { LicensesPage } from './LicensesPage.tsx';
import { UsersPage } from './UsersPage.tsx';
import { WebhooksPage } from './WebhooksPage.tsx';

const client = consoleClient;

/** The administration sections. */
export const adminSections: Section[] = [
  { path: '/console/licenses', label: 'Licenses', component: () => h(LicensesPage, { client }) },
  { path: '/console/users', label: 'Users', component: () => h(UsersPage, { client }) },
  { path: '/console/webhooks', label: 'Webhooks', component: () => h(WebhooksPage, { client }) },
  { path: '/console/audit', label: 'Audit', component: () => h(AuditPage, { client }) },
  { path: '/console/health', label: 'Health', component: () => h(DbHealthPage, { client }) },
];
