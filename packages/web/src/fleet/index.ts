import type { Section } from '../sections.ts';
import { Unbuilt } from '../ui/unbuilt.tsx';

/** The fleet sections: agents, their groups and the command queue. */
export const fleetSections: Section[] = [
  { path: '/console/fleet', label: 'Fleet', component: () => Unbuilt({ title: 'Fleet' }) },
  { path: '/console/commands', label: 'Commands', component: () => Unbuilt({ title: 'Commands' }) },
];
