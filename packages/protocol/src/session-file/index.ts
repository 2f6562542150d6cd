/** The session file: one definition of its schema and of every rule derived from it, no I/O. */
export * as lenient from './read.ts';
export { storable } from './read.ts';
export * from './finding.ts';
export * from './fingerprint-shape.ts';
export * from './score.ts';
export * from './frameworks.ts';
export * from './summaries.ts';
export * from './schema.ts';
export * from './json-schema.ts';
export * from './coverage.ts';
export * from './triage.ts';
export * from './identify.ts';
