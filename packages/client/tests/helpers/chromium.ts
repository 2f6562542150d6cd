import { inflateSync } from 'node:zlib';

/**
 * The color of a 1x1 PNG screenshot as `#rrggbb`. With one pixel every PNG filter type
 * leaves the bytes as they are (no left or upper neighbour), so inflating IDAT is enough.
 */
export function pixelOf(png: Buffer): string {
  if (png.readUInt32BE(16) !== 1 || png.readUInt32BE(20) !== 1) throw new Error('not a 1x1 PNG');
  const chunks: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    if (type === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(chunks));
  return `#${[...raw.subarray(1, 4)].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}
