/** nmap's `-oX` output as typed data (nmap.dtd, XML output version 1.05). */

/** One `<elem>` of NSE script output: a value, keyed inside a table or listed without a key. */
export interface ScriptElem {
  kind: 'elem';
  key?: string | undefined;
  value: string;
}

/** One `<table>` of NSE script output: keyed or listed, holding elems and tables in document order. */
export interface ScriptTable {
  kind: 'table';
  key?: string | undefined;
  children: ScriptNode[];
}

export type ScriptNode = ScriptElem | ScriptTable;

/** One `<script>`: its id, the human-readable `output` attribute and the structured tree. */
export interface NseScript {
  id: string;
  output: string;
  children: ScriptNode[];
}

export interface NmapService {
  name: string;
  product?: string | undefined;
  version?: string | undefined;
  extrainfo?: string | undefined;
  /** `ssl` when nmap found the service inside TLS. */
  tunnel?: string | undefined;
  /** `probed` (a probe matched) or `table` (a guess from the port number). */
  method?: string | undefined;
  /** Confidence 0..10: 10 for a probe match, 3 for a port-number guess. */
  conf?: number | undefined;
  ostype?: string | undefined;
  cpes: string[];
}

export interface NmapPort {
  protocol: string;
  portid: number;
  state: string;
  reason?: string | undefined;
  service?: NmapService | undefined;
  scripts: NseScript[];
}

export interface NmapAddress {
  addr: string;
  addrtype: 'ipv4' | 'ipv6' | 'mac';
  vendor?: string | undefined;
}

export interface NmapHostname {
  name: string;
  type?: string | undefined;
}

export interface NmapOsMatch {
  name: string;
  accuracy: number;
}

export interface NmapHost {
  starttime?: number | undefined;
  endtime?: number | undefined;
  /** `timedout="true"`: `--host-timeout` cut the host short, so its ports were not all scanned. */
  timedOut?: boolean | undefined;
  status: { state: string; reason?: string | undefined };
  addresses: NmapAddress[];
  hostnames: NmapHostname[];
  ports: NmapPort[];
  os: NmapOsMatch[];
  hostscripts: NseScript[];
}

export interface NmapScanInfo {
  type: string;
  protocol: string;
  numservices?: number | undefined;
  services?: string | undefined;
}

/** Everything of the run that is not a host. */
export interface NmapRunInfo {
  version?: string | undefined;
  args?: string | undefined;
  /** Unix seconds. */
  start?: number | undefined;
  scaninfo: NmapScanInfo[];
  finished?:
    | {
        time?: number | undefined;
        elapsed?: number | undefined;
        exit?: string | undefined;
        summary?: string | undefined;
      }
    | undefined;
  hosts?: { up: number; down: number; total: number } | undefined;
  /** False when the document ended before `</nmaprun>` (nmap killed or timed out). */
  complete: boolean;
}

export interface NmapRun {
  info: NmapRunInfo;
  hosts: NmapHost[];
}

/** A `<taskprogress>` line, which nmap writes while a phase runs. */
export interface NmapProgress {
  task: string;
  percent: number;
  remaining?: number | undefined;
  etc?: number | undefined;
}
