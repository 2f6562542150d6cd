import type { Section } from '../sections.ts';
import { Unbuilt } from '../ui/unbuilt.tsx';

/** The administration sections. */
export const adminSections: Section[] = [
  { path: '/console/licenses', label: 'Licenses', component: () => Unbuilt({ title: 'Licenses' }), adminOnly: true },
  { path: '/console/users', label: 'Users', component: () => Unbuilt({ title: 'Users' }), adminOnly: true },
  { path: '/console/webhooks', label: 'Webhooks', component: () => Unbuilt({ title: 'Webhooks' }) },
  { path: '/console/audit', label: 'Audit', component: () => Unbuilt({ title: 'Audit' }) },
  { path: '/console/health', label: 'Health', component: () => Unbuilt({ title: 'Health' }) },
];
