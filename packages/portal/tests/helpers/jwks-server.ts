/**
 * A stand-in external OpenID provider for the external-provider tests, run as its own
 * process: `node jwks-server.ts`. It makes an RS256 key pair, serves the public half as a
 * JWKS and mints tokens on request, good ones and deliberately bad ones. It listens on
 * 127.0.0.1 on a free port and prints `{"port": N}` as its first stdout line. It exits on
 * SIGTERM/SIGINT and when its stdin closes (so it never outlives the test run).
 *
 *   GET /jwks.json  the public key (kid, alg RS256, use sig)
 *   GET /mint?...   a compact JWT as text/plain. Parameters (all optional):
 *     sub         subject (default "ext-user")
 *     role        `role` claim (omitted when absent)
 *     client_ids  comma-separated list for the `client_ids` claim (omitted when absent;
 *                 an empty value gives [])
 *     email       `email` claim
 *     iss, aud    issuer and audience (defaults: http://idp.test/, svc-external);
 *                 aud may be a comma-separated list, which gives an array claim
 *     exp         absolute expiry in seconds since the epoch, or "none" to omit it
 *                 (default: now + 600)
 *     nosub=1     omit `sub`
 *     alg         RS256 (default), RS512 (same key, unlisted algorithm), none (unsecured),
 *                 HS256 (HMAC keyed with the public key's PEM: the key-confusion attack)
 *     key=rogue   sign with a second key pair that carries the same kid
 *     kid         override the kid in the header
 */
import { createServer } from 'node:http';
import { createPublicKey } from 'node:crypto';
import {
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  SignJWT,
  UnsecuredJWT,
  type JWTPayload,
} from 'jose';

const KID = 'ext-key-1';
const main = await generateKeyPair('RS256', { extractable: true });
const rogue = await generateKeyPair('RS256', { extractable: true });
const publicJwk = { ...(await exportJWK(main.publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
const publicPem = await exportSPKI(main.publicKey);
// The same RSA key for RS512 (a WebCrypto key is bound to one hash).
const mainRs512 = await importPKCS8(await exportPKCS8(main.privateKey), 'RS512');
// Sanity check that the PEM is the same key as the JWK (the HS256 attack depends on it).
createPublicKey(publicPem);

async function mint(q: URLSearchParams): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: JWTPayload = {};
  if (q.get('nosub') !== '1') claims.sub = q.get('sub') ?? 'ext-user';
  if (q.has('role')) claims['role'] = q.get('role');
  if (q.has('client_ids')) claims['client_ids'] = (q.get('client_ids') ?? '').split(',').filter(Boolean);
  if (q.has('email')) claims['email'] = q.get('email');
  claims.iss = q.get('iss') ?? 'http://idp.test/';
  const aud = q.get('aud') ?? 'svc-external';
  claims.aud = aud.includes(',') ? aud.split(',') : aud;
  claims.iat = q.has('iat') ? Number(q.get('iat')) : now;
  const exp = q.get('exp');
  if (exp !== 'none') claims.exp = exp === null ? now + 600 : Number(exp);

  const alg = q.get('alg') ?? 'RS256';
  const kid = q.get('kid') ?? KID;
  if (alg === 'none') return new UnsecuredJWT(claims).encode();
  const jwt = new SignJWT(claims).setProtectedHeader({ alg, kid, typ: 'JWT' });
  if (alg === 'HS256') return jwt.sign(new TextEncoder().encode(publicPem));
  if (alg === 'RS512') return jwt.sign(mainRs512);
  return jwt.sign(q.get('key') === 'rogue' ? rogue.privateKey : main.privateKey);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const send = (status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  if (req.method === 'GET' && url.pathname === '/jwks.json') {
    send(200, 'application/json', JSON.stringify({ keys: [publicJwk] }));
  } else if (req.method === 'GET' && url.pathname === '/mint') {
    mint(url.searchParams).then(
      (token) => send(200, 'text/plain', token),
      (err: unknown) => send(400, 'text/plain', String(err)),
    );
  } else {
    send(404, 'text/plain', 'not found');
  }
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();

server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
