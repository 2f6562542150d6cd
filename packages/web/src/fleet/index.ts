import { h } from 'preact';
import { consoleClient } from '../api/client.ts';
import type { Section } from '../sections.ts';
import { CommandsPage } from './CommandsPage.tsx';
import { FleetPage } from './FleetPage.tsx';
import { SchedulesPage } from './SchedulesPage.tsx';

/** The fleet sections: agents, their groups, the command queue and the portal's scan schedules. */
export const fleetSections: Section[] = [
  { path: '/console/fleet', label: 'Fleet', component: () => h(FleetPage, { client: consoleClient }) },
  { path: '/console/commands', label: 'Commands', component: () => h(CommandsPage, { client: consoleClient }) },
  { path: '/console/schedules', label: 'Schedules', component: () => h(SchedulesPage, { client: consoleClient }) },
];
