import { rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SSH_HOST_KEYS_ID, SSH_HOST_KEYS_SOURCE } from './ssh-host-keys.ts';

/**
 * The scanner's own NSE scripts, by id (the name nmap reports them under). nmap loads a script
 * from a file, so each run writes the ones its profile names into a fresh private directory
 * (mode 700, so no other user can swap a file nmap runs as root) and removes it afterwards.
 */
const OWN_SCRIPTS: Readonly<Record<string, string>> = { [SSH_HOST_KEYS_ID]: SSH_HOST_KEYS_SOURCE };

/** The file nmap is given for an own script written into `dir`. */
export function ownScriptPath(dir: string, id: string): string {
  return join(dir, `${id}.nse`);
}

export interface WrittenScripts {
  dir: string;
  /** Synchronous, so that it may run in an 'exit' listener (kit/process/exit-on-signals.ts removedAfter). */
  remove: () => void;
}

export async function writeOwnScripts(ids: readonly string[]): Promise<WrittenScripts> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-nse-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    for (const id of ids) {
      const source = OWN_SCRIPTS[id];
      if (source === undefined) throw new Error(`no NSE script of the scanner is called ${id}`);
      await writeFile(ownScriptPath(dir, id), source, { mode: 0o600, flag: 'wx' });
    }
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, remove };
}
