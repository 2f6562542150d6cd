import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** Local receivers for the alert channels, all on 127.0.0.1 and closed by their `close`. */

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  close: () => Promise<void>;
}

/** A real SMTP server (no TLS, no AUTH) that keeps every mail; `refuse` answers 554 at connect. */
export async function smtpReceiver(opts: { refuse?: boolean } = {}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onConnect(_session, callback) {
      if (opts.refuse) return callback(Object.assign(new Error('no service'), { responseCode: 554 }));
      callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (raw += d));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface HttpReceiver {
  url: string;
  bodies: unknown[];
  headers: http.IncomingHttpHeaders[];
  close: () => Promise<void>;
}

/** Answers every POST with `status` after keeping its JSON body; `hang` never answers. */
export async function httpReceiver(
  opts: { status?: number; hang?: boolean; path?: string; location?: string } = {},
): Promise<HttpReceiver> {
  const bodies: unknown[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      headers.push(req.headers);
      if (opts.hang) return;
      res
        .writeHead(opts.status ?? 200, {
          'content-type': 'text/plain',
          ...(opts.location ? { location: opts.location } : {}),
        })
        .end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${opts.path ?? '/hook'}`,
    bodies,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
