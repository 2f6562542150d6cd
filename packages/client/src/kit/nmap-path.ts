import { findProgram } from './process/find-program.ts';

/** The first executable `nmap` on PATH, or undefined when there is none. */
export const findNmap = (env: NodeJS.ProcessEnv): string | undefined => findProgram('nmap', env) ?? undefined;

export const NMAP_MISSING =
  'nmap not found on PATH: install it (Debian: apt-get install nmap); tools/dependency_check.sh lists what the client tools need';
