/**
 * `npm run release`: every release artifact into dist/release/, from this checkout:
 *   svc-portal-<version>-linux-amd64.tar.gz           the portal (scripts/release/portal-archive.ts)
 *   svc-client-<version>-linux-{amd64,arm64}.tar.gz   svc and svcd (scripts/release/client-archive.ts)
 *   svc_<version>_{amd64,arm64}.deb, svcd_…deb         Debian packages (scripts/release/deb.ts)
 *   svc-portal-<version>-image.tar                     the portal's container image, an OCI archive (scripts/release/image.ts)
 *   SHA256SUMS                                         every file above
 *
 *   node scripts/release/build.ts [--no-image] [--out <dir>] [--prebuilt-web]
 * --no-image leaves the image out (a machine without buildah); --out writes elsewhere than dist/release/;
 * --prebuilt-web takes packages/web/dist as it is instead of building it again (the tests: `npm test`
 * built it, and browser tests running beside them read it).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildClientArchive, bundleClient } from './client-archive.ts';
import { parseArgs } from 'node:util';
import { clientArchiveFolder, RELEASE_CHECKSUMS } from '@svc/protocol';
import { ARCHES, releaseDir, removeStages, ROOT, run, setReleaseDir, stage, versions } from './common.ts';
import { buildDebs } from './deb.ts';
import { buildImage } from './image.ts';
import { buildPortalArchive } from './portal-archive.ts';

const sha256 = (file: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    fs.createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });

/** `sha256sum -c SHA256SUMS` checks the folder. */
export async function writeChecksums(files: readonly string[]): Promise<string> {
  const lines = await Promise.all(files.map(async (f) => `${await sha256(f)}  ${path.basename(f)}\n`));
  const out = path.join(releaseDir(), RELEASE_CHECKSUMS);
  fs.writeFileSync(out, [...lines].sort((a, b) => a.slice(66).localeCompare(b.slice(66))).join(''));
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'no-image': { type: 'boolean' }, out: { type: 'string' }, 'prebuilt-web': { type: 'boolean' } },
  });
  if (values.out !== undefined) setReleaseDir(values.out);
  const withImage = values['no-image'] !== true;
  const v = versions();
  fs.rmSync(releaseDir(), { recursive: true, force: true });
  fs.mkdirSync(releaseDir(), { recursive: true });
  const say = (what: string) => console.log(`release: ${what}`);

  if (values['prebuilt-web'] !== true) {
    say('building the web console');
    run('npm', ['run', '--silent', 'build:web']);
  } else if (!fs.existsSync(path.join(ROOT, 'packages', 'web', 'dist', 'index.html'))) {
    throw new Error('--prebuilt-web: packages/web/dist has no build (npm run build:web)');
  }
  const files: string[] = [];
  const portal = await buildPortalArchive(v, 'amd64');
  files.push(portal);
  say(path.relative(process.cwd(), portal));

  const bundles = await bundleClient();
  for (const arch of ARCHES) {
    const archive = buildClientArchive(v, arch, bundles);
    files.push(archive);
    say(path.relative(process.cwd(), archive));
    const unpacked = stage(`unpacked-client-${arch}`);
    run('tar', ['-xzf', archive, '-C', unpacked]);
    for (const deb of buildDebs(v, arch, path.join(unpacked, clientArchiveFolder(v.client, arch)))) {
      files.push(deb);
      say(path.relative(process.cwd(), deb));
    }
  }
  if (withImage) {
    const image = buildImage(v, portal);
    files.push(image);
    say(path.relative(process.cwd(), image));
  }
  const sums = await writeChecksums(files);
  say(`${path.relative(process.cwd(), sums)} (${files.length} files)`);
}

try {
  await main();
} catch (err) {
  console.error(`release: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  removeStages();
}
