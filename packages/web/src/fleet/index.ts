import type { Section } from '../sections.ts';
import { CommandsPage } from './commands-page.tsx';
import { FleetPage } from './fleet-page.tsx';
import { SchedulesPage } from './schedules-page.tsx';

/** The fleet sections: agents, their groups, the command queue and the portal's scan schedules. */
export const fleetSections: Section[] = [
  { path: '/console/fleet', label: 'Fleet', component: FleetPage },
  { path: '/console/commands', label: 'Commands', component: CommandsPage },
  { path: '/console/schedules', label: 'Schedules', component: SchedulesPage },
];
