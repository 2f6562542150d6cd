/**
 * Starts the test network in its own process, prints its run id, namespaces and temp dir as one JSON
 * line, then waits to be killed: the cleanup tests interrupt it with SIGTERM and SIGKILL.
 */
import { startNetlab } from './index.ts';

const lab = await startNetlab({ smb: false });
process.stdout.write(`${JSON.stringify({ runId: lab.runId, namespaces: lab.namespaces, dir: lab.dir })}\n`);
setInterval(() => {}, 60_000);
