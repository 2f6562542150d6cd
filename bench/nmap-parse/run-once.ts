/**
 * One measured pass over an nmap XML file, in its own process so each peak RSS is that pass's alone:
 *
 *   node bench/nmap-parse/run-once.ts read|saxes|parse <file.xml>
 *
 * `read` streams the file and decodes it, nothing more; `saxes` also feeds the text to saxes with
 * empty handlers (the XML tokenizer alone); `parse` runs the client's streaming parser
 * (parseNmapStream), which builds each host's model and hands it over, keeping none. Prints
 * one JSON line with wall and CPU time, peak RSS (process.resourceUsage().maxRSS) and counts.
 */
import fs from 'node:fs';
import { SaxesParser } from 'saxes';
import { parseNmapStream } from '@svc/client/engine/nmap-parse';

export type ParseMode = 'read' | 'saxes' | 'parse';

export interface ParseRun {
  mode: ParseMode;
  ms: number;
  cpuMs: number;
  maxRssMiB: number;
  /** RSS once the modules are loaded, before the pass. */
  startRssMiB: number;
  bytes: number;
  /** Elements seen (saxes), hosts handed over (parse). */
  count: number;
  ports: number;
}

const CHUNK = 64 * 1024;

async function pass(mode: ParseMode, file: string): Promise<Pick<ParseRun, 'bytes' | 'count' | 'ports'>> {
  const stream = fs.createReadStream(file, { highWaterMark: CHUNK });
  if (mode === 'parse') {
    let count = 0;
    let ports = 0;
    const info = await parseNmapStream(stream, {
      onHost: (h) => {
        count += 1;
        ports += h.ports.length;
      },
    });
    if (!info.complete) throw new Error('the parser saw no </nmaprun>');
    return { bytes: stream.bytesRead, count, ports };
  }
  const decoder = new TextDecoder('utf-8');
  const sax = mode === 'saxes' ? new SaxesParser({ xmlns: false }) : null;
  let count = 0;
  sax?.on('opentag', () => {
    count += 1;
  });
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    const text = decoder.decode(chunk, { stream: true });
    sax?.write(text);
  }
  sax?.close();
  return { bytes, count, ports: 0 };
}

const [mode, file] = process.argv.slice(2);
if ((mode !== 'read' && mode !== 'saxes' && mode !== 'parse') || file === undefined) {
  throw new Error('usage: run-once.ts read|saxes|parse <file.xml>');
}
const startRssMiB = process.memoryUsage.rss() / 2 ** 20;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const counts = await pass(mode, file);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const result: ParseRun = {
  mode,
  ms,
  cpuMs: (cpu.user + cpu.system) / 1000,
  maxRssMiB: process.resourceUsage().maxRSS / 1024,
  startRssMiB,
  ...counts,
};
console.log(JSON.stringify(result));
