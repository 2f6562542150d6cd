export * from './parse/index.ts';
export { detectFindings, REQUIRED_SCRIPTS } from './rules/index.ts';
export * from './nmap.ts';
