import fs from 'node:fs';
import path from 'node:path';
import { scannerSessionId } from '@svc/protocol';
import { sessionPath, within } from '../kit/session-dir/root.ts';
import { processAlive } from '@svc/protocol/node';

/**
 * A session id nobody else in the sessions root has or is about to write
 * (docs/scanner/session-directory.md, "Session ids"). Two scans started in the same second (two
 * targets on one agent, a cron job beside svcd) would both name their session after that
 * second; the later one takes the next free second instead, so the id keeps the session id
 * `YYYYMMDD_HHMMSS` pattern and stays within seconds of the start (metadata.started_at keeps
 * the exact time).
 *
 * A directory of that name means the id is taken. So does a claim: `.claim-<id>`, created with
 * O_EXCL when the id is chosen and removed once the session is written, because the directory
 * itself only appears at the end of a run (write.ts renames it in atomically) and two runs
 * choosing at once must not both pick the free one. A claim whose process is gone is stale and
 * taken over.
 */

const CLAIM_PREFIX = '.claim-';
/** An hour of seconds: more runs than that starting together is a loop, not a schedule. */
const MAX_SECONDS = 3600;

export interface ClaimedId {
  id: string;
  /** Gives the claim up (after the directory is written, or when the run fails); idempotent. */
  release(): void;
}

/** Creates the claim file; false when another live process holds it. A stale one is removed and tried again. */
function tryClaim(file: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = Number.NaN;
    try {
      holder = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
    } catch {
      // Released meanwhile: try again.
    }
    if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) return false;
    fs.rmSync(file, { force: true });
  }
  return false;
}

/** The first free id from the second `start` falls in, claimed until `release()`. */
export function claimSessionId(root: string, start: Date): ClaimedId {
  const base = path.resolve(root);
  fs.mkdirSync(base, { recursive: true });
  const first = Math.floor(start.getTime() / 1000) * 1000;
  for (let n = 0; n < MAX_SECONDS; n++) {
    const id = scannerSessionId(first + n * 1000);
    const dir = sessionPath(base, id);
    if (fs.existsSync(dir)) continue;
    const file = within(base, `${CLAIM_PREFIX}${id}`);
    if (!tryClaim(file)) continue;
    // A run that claimed it may have written the directory and released it since the check above.
    if (fs.existsSync(dir)) {
      fs.rmSync(file, { force: true });
      continue;
    }
    let held = true;
    return {
      id,
      release() {
        if (!held) return;
        held = false;
        fs.rmSync(file, { force: true });
      },
    };
  }
  throw new Error(`no free session id in ${base} within ${MAX_SECONDS} s of ${scannerSessionId(first)}`);
}
