import type { ComponentType } from 'preact';

/**
 * A console section: its navigation entry and the page at its path. The router (app.tsx)
 * mounts each section at its path and below it; fleet/index.ts and admin/index.ts list theirs.
 */
export interface Section {
  /** Under /console/, e.g. `/console/fleet`; sub-paths (`/console/fleet/*`) are the section's own. */
  path: string;
  label: string;
  component: ComponentType;
  /** Shown to admins only (the portal refuses these calls to scoped users anyway). */
  adminOnly?: boolean;
}
