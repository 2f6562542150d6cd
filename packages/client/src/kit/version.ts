import pkg from '../../package.json' with { type: 'json' };

/**
 * The client's version, from packages/client/package.json (one source for --version, heartbeats
 * and generated sessions). Imported, not read at run time: svcd's bundle carries it along.
 */
export const CLIENT_VERSION: string = pkg.version;
