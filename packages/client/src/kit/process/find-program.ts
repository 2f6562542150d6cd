import fs from 'node:fs';
import path from 'node:path';

/**
 * Where a program is: the one PATH lookup of the client, so that every part of it (the scan,
 * the dependency check, the host checks, the agent's system info) names the same binary.
 * Looked up in the PATH of the environment given (a command's env, never process.env by
 * default), in absolute directories only: an empty or relative entry would let the working
 * directory supply a scanner binary. Only an executable regular file counts (a directory
 * called nmap is not nmap). A name with a slash is a path, taken as it is when it runs.
 */
export function findProgram(names: string | readonly string[], env: NodeJS.ProcessEnv): string | null {
  const list = typeof names === 'string' ? [names] : names;
  for (const name of list) if (name.includes('/') && isExecutableFile(name)) return name;
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    for (const name of list) {
      if (name.includes('/')) continue;
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return null;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
