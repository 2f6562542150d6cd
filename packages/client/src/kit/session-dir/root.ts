import path from 'node:path';
import { isScannerSessionId } from '@svc/protocol';

/**
 * The sessions root: `--sessions-dir`, else the `SVC_SESSIONS_DIR` setting (config file or
 * environment), else `~/.svc/sessions`. Relative paths are taken from the working directory.
 */

export const SESSIONS_DIR_SETTING = 'SVC_SESSIONS_DIR';

export type SessionDirErrorCode = 'session.bad_id' | 'session.outside_root' | 'session.exists' | 'session.bad_name';

export class SessionDirError extends Error {
  readonly code: SessionDirErrorCode;
  constructor(code: SessionDirErrorCode, message: string) {
    super(message);
    this.name = 'SessionDirError';
    this.code = code;
  }
}

export interface RootSource {
  get(key: string): string | undefined;
}

export function defaultSessionsRoot(home: string): string {
  return path.join(home, '.svc', 'sessions');
}

export function sessionsRootOf(opts: {
  flag?: string | undefined;
  settings: RootSource;
  home: string;
  cwd?: string;
}): string {
  const chosen = opts.flag?.trim() || opts.settings.get(SESSIONS_DIR_SETTING)?.trim() || defaultSessionsRoot(opts.home);
  return path.resolve(opts.cwd ?? process.cwd(), chosen);
}

/** `child` resolved under `root`, or a SessionDirError when it would land anywhere else. */
export function within(root: string, child: string): string {
  const base = path.resolve(root);
  const full = path.resolve(base, child);
  const rel = path.relative(base, full);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).length !== 1)
    throw new SessionDirError('session.outside_root', `${JSON.stringify(child)} is not a name directly under ${base}`);
  return full;
}

/** The directory of session `id` under `root`; the id must match the session id pattern. */
export function sessionPath(root: string, id: string): string {
  if (!isScannerSessionId(id))
    throw new SessionDirError('session.bad_id', `${JSON.stringify(id)} is not a session id (YYYYMMDD_HHMMSS)`);
  return within(root, id);
}
