import net from 'node:net';

/**
 * A loopback port that holds a scan for as long as a test needs: while held it accepts
 * connections and never speaks, so nmap's version probes wait on it; once released, held
 * connections are closed and new ones are closed at once, so the scan finishes quickly.
 * A test that needs a scan to be running at some moment holds it instead of hoping the scan
 * lasts long enough.
 */
export interface ScanGate {
  port: number;
  /** Connections accepted so far (a held scan has reached the port once this is above 0). */
  accepted(): number;
  release(): void;
  hold(): void;
  close(): Promise<void>;
}

export async function openScanGate(): Promise<ScanGate> {
  let held = true;
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    accepted++;
    socket.on('error', () => undefined);
    if (!held) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    release() {
      held = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    hold() {
      held = true;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
