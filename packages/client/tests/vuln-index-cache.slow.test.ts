import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VulnIndex } from '@svc/protocol';
import { send, type Transport } from '../src/kit/http/request.ts';
import type { PortalTarget } from '../src/kit/portal/target.ts';
import { loadVulnIndex, vulnIndexCacheFile } from '../src/cve-match/vuln-index-cache.ts';
import { tempHome } from '@svc/test-support/cli';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { type HeldPort, listenOnLoopback } from '@svc/test-support/ports';
import { importTestFeeds, kevCatalog, nvdFeed } from '@svc/test-support/vuln-feeds';

/**
 * loadVulnIndex against the real portal (docs/vuln-feeds.md): the index cached per portal,
 * fetched again only when it changed, the cache used with one warning when the portal is out
 * of reach, null with an info line when the portal has none.
 */

let portal: TestPortal;
let license: LicenseFixture;
let home: string;
/** A TCP relay in front of the portal, so the portal can drop off the network at the same URL. */
let relay: HeldPort;
let online = true;
const relayed = new Set<net.Socket>();
/** Off the network: open (kept-alive) connections drop, new ones are refused. */
function goOffline(): void {
  online = false;
  for (const socket of relayed) socket.destroy();
}
let target: PortalTarget;
/** Every answer's status, as the client's own transport saw it. */
const statuses: number[] = [];
const recording: Transport = async (spec, timeoutMs) => {
  const res = await send(spec, timeoutMs);
  statuses.push(res.status);
  return res;
};

const NVD = nvdFeed([
  {
    id: 'CVE-2023-38408',
    cvss: 9.8,
    cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endExcluding: '9.3p2' }],
  },
]);

function load() {
  const warnings: string[] = [];
  const infos: string[] = [];
  const result = loadVulnIndex(target, {
    home,
    transport: recording,
    warn: (m) => warnings.push(m),
    info: (m) => infos.push(m),
  });
  return result.then((index) => ({ index, warnings, infos }));
}

beforeAll(async () => {
  portal = await startTestPortal();
  license = await createLicense(portal);
  home = await tempHome();
  const portalPort = Number(new URL(portal.url).port);
  relay = await listenOnLoopback((socket) => {
    if (!online) return socket.destroy();
    const upstream = net.connect(portalPort, '127.0.0.1');
    relayed.add(socket);
    socket.on('close', () => relayed.delete(socket));
    socket.pipe(upstream).pipe(socket);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  target = { uploadUrl: `http://127.0.0.1:${relay.port}/api/upload`, apiKey: license.key, jwt: null, timeoutS: 10 };
});
afterAll(async () => {
  await relay?.close();
  await portal?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe('loadVulnIndex', () => {
  it('returns null with an info line while the portal has no index, and caches nothing', async () => {
    const { index, warnings, infos } = await load();
    expect(index).toBeNull();
    expect(warnings).toEqual([]);
    expect(infos).toEqual([
      'the portal has no vulnerability index (No vulnerability index: the portal has no feeds imported yet (an operator runs npm run feeds:import, docs/vuln-feeds.md))',
    ]);
    expect(fs.existsSync(vulnIndexCacheFile(home, target))).toBe(false);
  });

  it('fetches the index once, caches it (mode 600), then reuses the cache on 304', async () => {
    const report = await importTestFeeds(portal, { nvd: [NVD] });
    statuses.length = 0;
    const first = await load();
    expect(first.index?.version).toBe(report.index.version);
    expect(first.index?.cves.map((c) => c.id)).toEqual(['CVE-2023-38408']);
    expect(first.warnings).toEqual([]);
    const file = vulnIndexCacheFile(home, target);
    expect(path.dirname(path.dirname(file))).toBe(path.join(home, '.svc'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(gunzipSync(fs.readFileSync(file)).toString('utf8'))).toEqual(first.index);

    const second = await load();
    expect(second.index).toEqual(first.index);
    expect(second.warnings).toEqual([]);
    expect(statuses).toEqual([200, 304]);
  });

  it('fetches again when the index changed', async () => {
    const report = await importTestFeeds(portal, {
      kev: kevCatalog([{ cve: 'CVE-2023-38408', dateAdded: '2024-01-02' }]),
    });
    statuses.length = 0;
    const { index } = await load();
    expect(statuses).toEqual([200]);
    expect(index?.version).toBe(report.index.version);
    expect(index?.cves[0]?.kev).toEqual({ date_added: '2024-01-02', due_date: '2024-01-02', known_ransomware: false });
  });

  it('uses the cached index with one warning when the portal is out of reach', async () => {
    const cached = JSON.parse(
      gunzipSync(fs.readFileSync(vulnIndexCacheFile(home, target))).toString('utf8'),
    ) as VulnIndex;
    goOffline();
    try {
      const { index, warnings, infos } = await load();
      expect(index).toEqual(cached);
      expect(infos).toEqual([]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        new RegExp(
          `^vulnerability index not fetched: Cannot reach http://127\\.0\\.0\\.1:${relay.port}: \\w+; using the cached vulnerability index generated ${cached.generated_at}$`,
        ),
      );
    } finally {
      online = true;
    }
  });

  it('ignores a damaged cache with a warning and fetches the index whole', async () => {
    const file = vulnIndexCacheFile(home, target);
    fs.writeFileSync(file, 'not gzip');
    statuses.length = 0;
    const { index, warnings } = await load();
    expect(warnings).toEqual([`${file} is damaged (not gzip); ignoring it (it is rewritten by the next fetch)`]);
    expect(statuses).toEqual([200]);
    expect(index?.cves).toHaveLength(1);
    expect(JSON.parse(gunzipSync(fs.readFileSync(file)).toString('utf8'))).toEqual(index);
  });

  it.each([
    [3, 'a newer portal', 'svc'],
    [1, 'a portal from before index format 2, which read a CPE "-" as every version', 'the portal'],
  ])('refuses an index of format %i (%s), keeping to the cached copy', async (format, _who, update) => {
    // No portal of this version serves another format: a server that does stands in for the other one.
    const newer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', etag: `"v${format}"` });
      res.end(JSON.stringify({ format, version: `v${format}`, cves: [], products: {} }));
    });
    await new Promise<void>((resolve) => newer.listen(0, '127.0.0.1', resolve));
    try {
      const port = (newer.address() as { port: number }).port;
      const other = { ...target, uploadUrl: `http://127.0.0.1:${port}/api/upload` };
      const warnings: string[] = [];
      expect(await loadVulnIndex(other, { home, warn: (m) => warnings.push(m) })).toBeNull();
      expect(warnings).toEqual([
        `the portal's vulnerability index was refused: format ${format}, which this svc does not know (it reads format 2; update ${update}); no vulnerability index is cached, CVEs are matched from the built-in table only`,
      ]);
      expect(fs.existsSync(vulnIndexCacheFile(home, other))).toBe(false);
    } finally {
      await new Promise((resolve) => newer.close(resolve));
    }
  });

  it('throws on a refused key instead of hiding it behind the cache', async () => {
    await expect(loadVulnIndex({ ...target, apiKey: 'svc_pro_notakey0000000000' }, { home })).rejects.toMatchObject({
      name: 'PortalError',
      kind: 'http',
      status: 403,
    });
  });
});
