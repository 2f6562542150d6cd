import type { ScanFinding } from '../pipeline/types.ts';
import type { ImportBook } from './common.ts';
import { isAddress, validPort } from './common.ts';
import { namesHost } from './keep.ts';

/**
 * Where a Nuclei result was found. Nuclei v3 leaves `host` out of some results: javascript
 * templates give only `url` (written `/http://name/`), DNS templates run on a bare name may
 * give nothing. So the place comes from `matched-at`, else `host`, else `url`, and the address
 * from `ip`; a result without an address takes the one another result of the file gives for the
 * same name, else its name, else the scan's only host (the file's, or the only `--targets` one).
 */

type Json = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };
/** Longest name used to match results (RFC 1123's limit is 253). */
const MAX_NAME = 253;

export interface Place {
  ip?: string;
  hostname?: string;
  port?: number;
  scheme?: string;
}

/** The place a result names: address, name, port and scheme. */
export function placeOf(r: Json): Place {
  // `url` of javascript templates has a slash before its scheme.
  const raw =
    str(r['matched-at']) ?? str(r['host']) ?? str(r['url'])?.replace(/^\/+(?=[a-z][a-z0-9+.-]*:\/\/)/i, '') ?? '';
  let hostname: string | undefined;
  let port: number | undefined;
  let scheme: string | undefined;
  if (raw !== '')
    try {
      const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `tcp://${raw}`);
      hostname = u.hostname.replace(/^\[|\]$/g, '') || undefined;
      scheme = u.protocol.replace(/:$/, '');
      port = u.port === '' ? DEFAULT_PORTS[scheme] : Number(u.port) || undefined;
    } catch {
      hostname = undefined;
    }
  const given = r['port'];
  port = validPort(Number(typeof given === 'number' ? given : (str(given) ?? ''))) ?? port;
  const ip = str(r['ip']) ?? (hostname !== undefined && isAddress(hostname) ? hostname : undefined);
  return {
    ...(ip === undefined ? {} : { ip }),
    ...(hostname === undefined || hostname === ip ? {} : { hostname }),
    ...(port === undefined ? {} : { port }),
    ...(scheme === undefined ? {} : { scheme }),
  };
}

/** Results without an address, held (kept, so bounded) until the file is read and their host known. */
export class PlaceBook {
  readonly #ipOf = new Map<string, string>();
  readonly #pending: { finding: ScanFinding; name: string | undefined }[] = [];
  readonly #book: ImportBook;

  constructor(book: ImportBook) {
    this.#book = book;
  }

  /** A finding at its place: added now when the place has an address, else held. */
  add(f: ScanFinding, place: Place): void {
    const name =
      place.hostname !== undefined && place.hostname.length <= MAX_NAME ? place.hostname.toLowerCase() : undefined;
    if (place.ip !== undefined) {
      if (name !== undefined && !this.#ipOf.has(name)) this.#ipOf.set(name, place.ip);
      this.#book.add(f);
    } else this.#pending.push({ finding: this.#book.keeper.pending(f), name });
  }

  /** Places the held results; `targets` are the `--targets` hosts. */
  finish(targets: readonly string[]): void {
    const byName = (name: string | undefined) =>
      name === undefined ? undefined : (this.#ipOf.get(name) ?? (namesHost(name) ? name : undefined));
    const hosts = new Set([...this.#book.hosts.addresses(), ...this.#pending.flatMap((p) => byName(p.name) ?? [])]);
    const only = hosts.size === 1 ? [...hosts][0] : targets.length === 1 ? targets[0] : undefined;
    for (const { finding, name } of this.#pending) {
      const host = byName(name) ?? only;
      this.#book.place(finding, host, name !== undefined && name !== host ? name : undefined);
    }
  }
}
