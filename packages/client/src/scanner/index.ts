export * from './parse/index.ts';
export { detectFindings, OPTIONAL_SCRIPTS, REQUIRED_SCRIPTS, RULE_FAMILIES, type RuleContext } from './rules/index.ts';
export { compareVersions } from './versions/compare.ts';
export { KNOWN_VULNERABLE, KNOWN_VULNERABLE_CHECKED } from './versions/known-vulnerable.ts';
export * from './nmap.ts';
