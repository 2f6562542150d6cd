import type { ConsolePath } from '@svc/protocol';
import type { ComponentType } from 'preact';

/**
 * A console section: its navigation entry and the page at its path. The router (app.tsx)
 * mounts each section at its path and below it; fleet/index.ts and admin/index.ts list theirs.
 * Who may open it is the protocol's CONSOLE_ACCESS entry for its path (auth/access.ts).
 */
export interface Section {
  /** Under /console/, e.g. `/console/fleet`; sub-paths (`/console/fleet/*`) are the section's own. */
  path: ConsolePath;
  label: string;
  component: ComponentType;
}
