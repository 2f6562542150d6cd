/**
 * What can be installed through a package manager, named per manager. A leaf: the tool table
 * (tools.ts) and the package-manager commands (package-manager.ts) both build on it.
 */
export type ManagerName = 'apt' | 'dnf' | 'yum' | 'apk' | 'brew';

/** Package names differ per package manager; null means the manager's standard repositories have none. */
export type PackageNames = Record<ManagerName, string | null>;

export interface Installable {
  /** The name reports use (the main command's name). */
  id: string;
  packages: PackageNames;
  /** Where to get it when no package exists. */
  homepage?: string;
}
