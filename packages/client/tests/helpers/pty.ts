import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A program under a real pseudo-terminal, through tmux: its stdin and stdout are a TTY, as in
 * a user's interactive shell. Each session gets its own tmux server (`-L <unique socket>`), so
 * parallel tests never share one and the server's environment cannot leak in; the command
 * itself runs under `env -i` with exactly the variables given. `close()` kills the server.
 */
export interface PtySession {
  /** The screen and its scrollback (tmux keeps 2000 lines), with color escapes when `escapes`. */
  capture(opts?: { escapes?: boolean }): Promise<string>;
  /** Polls the screen until `pattern` matches; throws with the screen after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number, opts?: { escapes?: boolean }): Promise<string>;
  /** Types `text` and presses Enter. */
  sendLine(text: string): Promise<void>;
  /** Waits for the `EXIT=<code>` line the wrapper prints and returns the code. */
  exitCode(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export async function startPty(
  argv: string[],
  env: Record<string, string>,
  opts: { width?: number; height?: number } = {},
): Promise<PtySession> {
  const socket = `svc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const name = 'main';
  const tmux = (...args: string[]) =>
    run('tmux', ['-L', socket, ...args], {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        TERM: 'xterm-256color',
        HOME: process.env['HOME'] ?? '/tmp',
      },
    });
  const assignments = Object.entries({ TERM: 'xterm-256color', ...env }).map(([k, v]) => quote(`${k}=${v}`));
  const command = `env -i ${assignments.join(' ')} ${argv.map(quote).join(' ')}; echo EXIT=$?; sleep 30`;
  await tmux(
    'new-session',
    '-d',
    '-s',
    name,
    '-x',
    String(opts.width ?? 200),
    '-y',
    String(opts.height ?? 50),
    command,
  );

  const capture = async (o: { escapes?: boolean } = {}) =>
    (await tmux('capture-pane', '-p', '-J', ...(o.escapes ? ['-e'] : []), '-S', '-', '-t', name)).stdout;
  const waitFor = async (pattern: RegExp, timeoutMs = 15_000, o: { escapes?: boolean } = {}) => {
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await capture(o);
      if (pattern.test(screen)) return screen;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern} in the terminal:\n${screen}`);
  };
  return {
    capture,
    waitFor,
    async sendLine(text) {
      await tmux('send-keys', '-t', name, '-l', text);
      await tmux('send-keys', '-t', name, 'Enter');
    },
    async exitCode(timeoutMs = 15_000) {
      const screen = await waitFor(/^EXIT=\d+$/m, timeoutMs);
      return Number(/^EXIT=(\d+)$/m.exec(screen)![1]);
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
}
