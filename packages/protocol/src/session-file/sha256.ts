/**
 * SHA-256 (FIPS 180-4) over a string's UTF-8 bytes, in plain TypeScript. The protocol package
 * has no I/O and no Node-only API: the web console may load it in a browser, where
 * node:crypto does not exist and WebCrypto's digest is asynchronous. A scan fingerprints every
 * finding (10,000 and more), so the rounds stay in 32-bit integers; the tests check it against
 * node:crypto.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

// The rounds keep every word a signed 32-bit integer (`| 0`): V8 then computes on small
// integers instead of boxing the unsigned values above 2^31 as doubles. Only the hex output
// reads them as unsigned again.
const W = new Int32Array(64);
const H = new Int32Array(8);
const encoder = new TextEncoder();
/** Reused between calls (grown when a message needs more): fingerprints are hashed by the thousand. */
let buffer = new Uint8Array(256);

export function sha256Hex(text: string): string {
  // UTF-8 needs at most 3 bytes per UTF-16 code unit; then the 0x80 marker and the 8-byte length.
  if (buffer.length < text.length * 3 + 72) buffer = new Uint8Array(text.length * 3 + 72);
  const length = encoder.encodeInto(text, buffer).written;
  // Message, the 0x80 marker, zero padding, and the bit length in the last 8 bytes.
  const blocks = Math.ceil((length + 9) / 64);
  const bytes = buffer.subarray(0, blocks * 64);
  bytes.fill(0, length);
  bytes[length] = 0x80;
  const view = new DataView(bytes.buffer, 0, bytes.length);
  const bits = length * 8;
  view.setUint32(bytes.length - 8, Math.floor(bits / 0x1_0000_0000));
  view.setUint32(bytes.length - 4, bits >>> 0);

  const h = H;
  h[0] = 0x6a09e667;
  h[1] = 0xbb67ae85;
  h[2] = 0x3c6ef372;
  h[3] = 0xa54ff53a;
  h[4] = 0x510e527f;
  h[5] = 0x9b05688c;
  h[6] = 0x1f83d9ab;
  h[7] = 0x5be0cd19;
  const w = W;
  for (let off = 0; off < bytes.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a: number = h[0]!;
    let b: number = h[1]!;
    let c: number = h[2]!;
    let d: number = h[3]!;
    let e: number = h[4]!;
    let f: number = h[5]!;
    let g: number = h[6]!;
    let hh: number = h[7]!;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = h[0]! + a;
    h[1] = h[1]! + b;
    h[2] = h[2]! + c;
    h[3] = h[3]! + d;
    h[4] = h[4]! + e;
    h[5] = h[5]! + f;
    h[6] = h[6]! + g;
    h[7] = h[7]! + hh;
  }
  let hex = '';
  for (let i = 0; i < 8; i++) hex += (h[i]! >>> 0).toString(16).padStart(8, '0');
  return hex;
}
