export * from './parse/index.ts';
export { detectFindings, notCheckedLine, notCheckedOn, OWN_RULE_SCRIPTS, REQUIRED_SCRIPTS } from './rules/index.ts';
export * from './nmap.ts';
