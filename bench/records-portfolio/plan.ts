/**
 * What bench/records-portfolio.ts runs: its options and its cases (the first page, a deep cursor and
 * the filters), with the clients, targets and hosts of bench/records-portfolio/seed.ts.
 */
import { parseArgs } from 'node:util';
import { wholeNumber } from '../lib/options.ts';
import { clientIdOf, hostPrefixOf, targetOf } from './seed.ts';

export const BUDGET_MS = 100;
/** What a browser sends (the portal answers brotli to it). */
export const ACCEPT_ENCODING = 'gzip, deflate, br, zstd';

export interface Options {
  clients: number;
  targets: number;
  records: number;
  limit: number;
  requests: number;
  caseSeconds: number;
  deep: number;
  quietWaitS: number;
  verbose: boolean;
}

export const USAGE = `usage: node bench/records-portfolio.ts [flags]
  --clients=N       clients (default 200)
  --targets=N       targets per client (default 10)
  --records=N       records per target (default 500)
  --limit=N         page size asked (default 100, the API's default; at most 500)
  --requests=N      measured requests per side and case (default 100)
  --case-seconds=S  at most this long per case, all sides (default 40)
  --deep=N          the deep page starts after this many rows (default 500000)
  --quiet-wait=S    before each case, wait up to S s for an idle machine (default 10, 0 = off)
  --verbose         echo the portal's output`;

export function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      clients: { type: 'string' },
      targets: { type: 'string' },
      records: { type: 'string' },
      limit: { type: 'string' },
      requests: { type: 'string' },
      'case-seconds': { type: 'string' },
      deep: { type: 'string' },
      'quiet-wait': { type: 'string' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const o: Options = {
    clients: wholeNumber('clients', values.clients, 200, 3, 1000),
    targets: wholeNumber('targets', values.targets, 10, 1, 100),
    records: wholeNumber('records', values.records, 500, 50, 10_000),
    limit: wholeNumber('limit', values.limit, 100, 1, 500),
    requests: wholeNumber('requests', values.requests, 100, 5, 10_000),
    caseSeconds: wholeNumber('case-seconds', values['case-seconds'], 40, 5, 600),
    deep: wholeNumber('deep', values.deep, 500_000, 1, 100_000_000),
    quietWaitS: wholeNumber('quiet-wait', values['quiet-wait'], 10, 0, 600),
    verbose: values.verbose ?? false,
  };
  if (o.deep >= o.clients * o.targets * o.records) throw new Error('--deep must be below the number of records');
  return o;
}

export interface Case {
  name: string;
  /** The query string without limit. */
  query: string;
}

/** The cases, for a cursor at row --deep. */
export function casesOf(o: Options, deepCursor: string): Case[] {
  const c1 = clientIdOf(17 % o.clients);
  const c1n = 17 % o.clients;
  const t1 = 3 % o.targets;
  return [
    { name: 'first page (admin, no filter)', query: '' },
    { name: `page after row ${o.deep.toLocaleString('en')} (cursor)`, query: `cursor=${deepCursor}` },
    { name: 'severity=critical,high', query: 'severity=critical,high' },
    { name: 'status=open', query: 'status=open' },
    { name: 'overdue=true', query: 'overdue=true' },
    { name: 'kev=true', query: 'kev=true' },
    { name: 'exception=accepted', query: 'exception=accepted' },
    { name: 'exception=expired', query: 'exception=expired' },
    { name: 'disposition=false_positive', query: 'disposition=false_positive' },
    { name: `host_prefix (one target's hosts, no client)`, query: `host_prefix=${hostPrefixOf(c1n, t1)}` },
    { name: 'host (exact, no client)', query: `host=${hostPrefixOf(c1n, t1)}7` },
    { name: 'target (no client)', query: `target=${encodeURIComponent(targetOf(c1n, t1))}` },
    { name: 'client_id (one)', query: `client_id=${c1}` },
    {
      name: 'client_id (three)',
      query: `client_id=${[c1, clientIdOf(42 % o.clients), clientIdOf(123 % o.clients)].join(',')}`,
    },
    { name: 'client_id + host_prefix', query: `client_id=${c1}&host_prefix=${hostPrefixOf(c1n, t1)}` },
    { name: 'client_id + status=open + severity=critical', query: `client_id=${c1}&status=open&severity=critical` },
    // The other orders (migration 0021): across every client from their index, within clients sorted.
    { name: 'sort=first_seen_desc', query: 'sort=first_seen_desc' },
    { name: 'sort=first_seen_asc + status=open', query: 'sort=first_seen_asc&status=open' },
    { name: 'sort=due_date_asc', query: 'sort=due_date_asc' },
    { name: 'sort=epss_desc', query: 'sort=epss_desc' },
    { name: 'sort=host_asc', query: 'sort=host_asc' },
    { name: 'sort=epss_desc + client_id (one)', query: `sort=epss_desc&client_id=${c1}` },
    {
      name: 'sort=due_date_asc + client_id (three)',
      query: `sort=due_date_asc&client_id=${[c1, clientIdOf(42 % o.clients), clientIdOf(123 % o.clients)].join(',')}`,
    },
  ];
}
