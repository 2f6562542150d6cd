import { hostKindOf } from '@svc/protocol';
import type { HostInfo, ScanFinding } from '../pipeline/types.ts';
import { fieldText, ImportError, MAX_FIELD_CHARS, MAX_FINDINGS, MAX_HOSTS, MAX_KEPT_CHARS } from './guard.ts';

/**
 * Where a parsed value becomes a kept field: every finding, host and scan-level text an import
 * keeps passes through one Keeper, which applies the cut rule (guard.ts fieldText) to every
 * string, checks hosts and host names, and refuses a file past the import's totals. What it
 * left out or cut is counted for the import's summary (docs/cli/import.md "Limits").
 */

/** What an import left out or cut (docs/cli/import.md, "Hosts and host names"). */
export interface ImportChecks {
  /** Findings and host records left out: their host is not an IP address or a host name. */
  invalid_hosts: number;
  /** Host names dropped from findings and host records: not a host name. */
  invalid_hostnames: number;
  /** Fields cut at MAX_FIELD_CHARS characters. */
  cut_fields: number;
}

/** The summary's words for what was left out or cut; empty when nothing was. */
export function checksLine(c: ImportChecks): string {
  const parts = [
    c.invalid_hosts === 0
      ? ''
      : `findings or hosts left out for a host that is not an IP address or host name: ${c.invalid_hosts}`,
    c.invalid_hostnames === 0 ? '' : `host names dropped for not being RFC 1123 host names: ${c.invalid_hostnames}`,
    c.cut_fields === 0 ? '' : `fields cut at ${MAX_FIELD_CHARS} characters: ${c.cut_fields}`,
  ];
  return parts.filter((p) => p !== '').join('; ');
}

/** An IPv4 or IPv6 address or an RFC 1123 host name (packages/protocol scan-targets.ts hostKindOf). */
export const namesHost = (value: string): boolean => hostKindOf(value) !== undefined;

const MIB = 1024 * 1024;
/**
 * What holding one value costs beyond its characters, counted against MAX_KEPT_CHARS so that a
 * flood of tiny values (one-character list entries, port numbers) is bounded as text is.
 */
const VALUE_COST = 16;
const PORT_COST = 8;

export class Keeper {
  readonly checks: ImportChecks = { invalid_hosts: 0, invalid_hostnames: 0, cut_fields: 0 };
  #findings = 0;
  #hosts = 0;
  #chars = 0;

  /** A text kept as it is cut (target, version, OS); undefined stays undefined. */
  text(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    const kept = fieldText(value);
    if (kept.length > MAX_FIELD_CHARS) this.checks.cut_fields += 1;
    this.#count(kept.length + VALUE_COST);
    return kept;
  }

  /** A host value trimmed when it names a host; undefined (counted) when it does not. */
  host(value: string | undefined): string | undefined {
    const v = value?.trim() ?? '';
    if (v !== '' && namesHost(v)) return v;
    this.checks.invalid_hosts += 1;
    return undefined;
  }

  /** A host name trimmed when it is one; undefined (counted) when given and not one. */
  hostname(value: string | undefined): string | undefined {
    const v = value?.trim() ?? '';
    if (v === '') return undefined;
    if (namesHost(v)) return v;
    this.checks.invalid_hostnames += 1;
    return undefined;
  }

  /** The finding as kept, or null when its host names no host (counted). */
  finding(f: ScanFinding): ScanFinding | null {
    const host = this.host(f.host ?? undefined);
    if (host === undefined) return null;
    this.#countFinding();
    const kept = this.#record(f) as ScanFinding;
    kept.host = host;
    const hostname = this.hostname(f.hostname ?? undefined);
    if (hostname === undefined) delete kept.hostname;
    else kept.hostname = hostname;
    return kept;
  }

  /**
   * A finding whose host is not known yet (a Nuclei result without an address), counted and cut
   * as a kept one; its host and host name are checked once placed (ImportBook.place).
   */
  pending(f: ScanFinding): ScanFinding {
    this.#countFinding();
    const kept = this.#record(f) as ScanFinding;
    delete kept.host;
    delete kept.hostname;
    return kept;
  }

  /** One more distinct host; refused past MAX_HOSTS. */
  countHost(): void {
    this.#hosts += 1;
    if (this.#hosts > MAX_HOSTS)
      throw new ImportError(
        `Refused: the file names more than ${MAX_HOSTS} hosts, more than one import keeps (split the scan)`,
      );
  }

  /** A host record (nmap's topology entries) as kept, or null when its address names no host. */
  hostInfo(h: HostInfo): HostInfo | null {
    const ip = this.host(h.ip);
    if (ip === undefined) return null;
    this.countHost();
    const hostname = this.hostname(h.hostname);
    const os = this.text(h.os_guess);
    this.#count(PORT_COST * (h.open_ports?.length ?? 0));
    return {
      ip,
      ...(hostname === undefined ? {} : { hostname }),
      ...(os === undefined || os === '' ? {} : { os_guess: os }),
      ...(h.open_ports === undefined ? {} : { open_ports: h.open_ports }),
    };
  }

  /** Every string of a finding cut, lists cut as a whole; host and hostname are checked by the caller. */
  #record(value: object): object {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string') out[key] = this.text(v);
      else if (Array.isArray(v)) out[key] = this.#list(v);
      else if (v !== null && typeof v === 'object') out[key] = this.#record(v);
      else out[key] = v;
    }
    return out;
  }

  /** A list of texts is one field: its entries kept while they fit in MAX_FIELD_CHARS together. */
  #list(values: readonly unknown[]): unknown[] {
    const out: unknown[] = [];
    let chars = 0;
    for (const v of values) {
      if (typeof v !== 'string') {
        out.push(v);
        continue;
      }
      const t = fieldText(v);
      if (chars + t.length > MAX_FIELD_CHARS && out.length > 0) {
        this.checks.cut_fields += 1;
        break;
      }
      chars += t.length;
      out.push(t);
    }
    this.#count(chars + VALUE_COST * out.length);
    return out;
  }

  #countFinding(): void {
    this.#findings += 1;
    if (this.#findings > MAX_FINDINGS)
      throw new ImportError(
        `Refused: the file holds more than ${MAX_FINDINGS} findings, more than one import keeps (split the scan)`,
      );
  }

  #count(chars: number): void {
    this.#chars += chars;
    if (this.#chars > MAX_KEPT_CHARS)
      throw new ImportError(
        `Refused: the file's findings and hosts hold more than ${MAX_KEPT_CHARS / MIB} Mi characters of text after each field's cut at ${MAX_FIELD_CHARS} (split the scan)`,
      );
  }
}
