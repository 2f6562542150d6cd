export * from './common.ts';
export * from './permissions.ts';
export * from './health.ts';
export * from './licenses.ts';
export * from './audit.ts';
export * from './identity.ts';
export * from './sessions.ts';
export * from './agents.ts';
