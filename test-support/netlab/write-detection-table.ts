/**
 * `npm run scanner:detection-table`: starts the test network, runs the scan scanner-netlab.slow.test.ts
 * runs and writes docs/scanner/detection-table.md (`--write`; without it the table is printed).
 * Needs root, like the test.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { detectionTableBody, detectionTableFile, TABLE_FILE } from './detection-table.ts';
import { startNetlab } from './index.ts';
import { scanPlanted } from './planted.ts';

const write = process.argv.includes('--write');
const lab = await startNetlab();
try {
  const { result, findings } = await scanPlanted(lab);
  if (!result.complete) throw new Error('the scan did not complete; the table would be partial');
  const text = detectionTableFile(detectionTableBody(findings, lab.hosts), {
    nmap: result.run.version ?? 'unknown',
    debian: readFileSync('/etc/debian_version', 'utf8').trim(),
    date: new Date().toISOString().slice(0, 10),
  });
  if (write) {
    writeFileSync(TABLE_FILE, text);
    console.error(`wrote ${TABLE_FILE} (${findings.length} findings, nmap ${Math.round(result.durationMs / 1000)} s)`);
  } else {
    process.stdout.write(text);
  }
} finally {
  lab.stop();
}
