/**
 * @svc/client/engine/nmap-parse: nmap's XML read into hosts, and nothing else loaded with it
 * (bench/nmap-parse/run-once.ts measures the parser's peak memory in a process of its own).
 */
export { parseNmapStream, parseNmapXml } from '../scanner/parse/index.ts';
