import { h } from 'preact';
import { consoleClient } from '../api/client.ts';
import type { Section } from '../sections.ts';
import { CommandsPage } from './commands-page.tsx';
import { FleetPage } from './fleet-page.tsx';
import { SchedulesPage } from './schedules-page.tsx';

/** The fleet sections: agents, their groups, the command queue and the portal's scan schedules. */
export const fleetSections: Section[] = [
  { path: '/console/fleet', label: 'Fleet', component: () => h(FleetPage, { client: consoleClient }) },
  { path: '/console/commands', label: 'Commands', component: () => h(CommandsPage, { client: consoleClient }) },
  { path: '/console/schedules', label: 'Schedules', component: () => h(SchedulesPage, { client: consoleClient }) },
];
