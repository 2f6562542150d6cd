/**
 * The part of the protocol that needs Node (hashing through node:crypto, processes, replacing a
 * file), for the portal, the client and the agent. The index stays free of `node:` imports because
 * the web console bundles it.
 */
export * from './session-file/sha256.ts';
export * from './session-file/fingerprint.ts';
export * from './license-key-hash.ts';
export * from './session-file/tracking.ts';
export * from './exports/index.ts';
export * from './pid-alive.ts';
export * from './replace-file.ts';
