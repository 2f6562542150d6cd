/**
 * Same PID, fresh process image: every module loaded again, uptime and last heartbeat reset.
 * Through bin/svcd (which `exec`s node) rather than node itself: it picks the node binary and
 * flags again and runs the bundle as the update just built it.
 */
export function reexecSelf(selfCommand: string): never {
  const execve = process.execve;
  if (execve === undefined) throw new Error('process.execve is not available (Node.js 22.15 or later on POSIX)');
  return execve(selfCommand, [selfCommand, ...process.argv.slice(2)], process.env);
}
