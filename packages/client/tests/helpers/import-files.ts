import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { parseForeignFile } from '../../src/imports/detect.ts';
import { DEFAULT_MAX_BYTES, ImportError } from '../../src/imports/guard.ts';
import { tempHome } from '@svc/test-support/cli';
import { xmlEscape } from '@svc/test-support/foreign-reports';

/** Foreign report files written to a temp home and read as `svc import` reads them (docs/cli/import.md "Limits"). */

/** Where a kept text is cut. */
export const CUT = 64 * 1024;
/** The time the imported scans are read at. */
export const START = new Date('2026-01-13T10:00:00Z');

type Format = 'auto' | 'nmap' | 'nessus' | 'openvas' | 'nuclei';

/** For the calling test file: `parse` a file's text, or the reason it is `refused`. */
export function useImportFiles() {
  let dir: string;
  beforeAll(async () => {
    dir = await tempHome();
  });
  afterAll(async () => {
    await fs.promises.rm(dir, { recursive: true, force: true });
  });
  let n = 0;
  const write = (text: string) => {
    const p = path.join(dir, `f${++n}`);
    fs.writeFileSync(p, text);
    return p;
  };
  const parse = (text: string, format: Format = 'auto') =>
    parseForeignFile(write(text), { format, maxBytes: DEFAULT_MAX_BYTES, now: START });
  /** The reason a file was refused: its message names the file first (`<file>: <reason>`). */
  const refusal = async (text: string, format: 'auto' | 'nessus' = 'auto') => {
    const file = write(text);
    const err = await parseForeignFile(file, { format, maxBytes: DEFAULT_MAX_BYTES, now: START }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).kind).toBe('refused');
    const message = (err as ImportError).message;
    expect(message.startsWith(`${file}: `), message).toBe(true);
    return message.slice(file.length + 2);
  };
  return { parse, refusal };
}

/** A Nessus v2 file: one ReportHost per entry, its HostProperties tags and ReportItems as written. */
export const nessus = (hosts: { name: string; tags?: Record<string, string>; items?: string[] }[]) =>
  '<?xml version="1.0" ?>\n<NessusClientData_v2><Report name="r">' +
  hosts
    .map(
      (h) =>
        `<ReportHost name="${xmlEscape(h.name)}"><HostProperties>` +
        Object.entries(h.tags ?? {})
          .map(([k, v]) => `<tag name="${k}">${xmlEscape(v)}</tag>`)
          .join('') +
        `</HostProperties>${(h.items ?? [item()]).join('')}</ReportHost>`,
    )
    .join('\n') +
  '</Report></NessusClientData_v2>\n';

/** One Nessus ReportItem: a TLS 1.0 finding unless `attrs` say otherwise. */
export const item = (attrs: Record<string, string> = {}, body = '<plugin_output>seen</plugin_output>') =>
  `<ReportItem ${Object.entries({
    port: '443',
    protocol: 'tcp',
    severity: '2',
    pluginID: '104743',
    pluginName: 'TLS 1.0',
    ...attrs,
  })
    .map(([k, v]) => `${k}="${xmlEscape(v)}"`)
    .join(' ')}>${body}</ReportItem>`;

/** A Nessus file of one host whose one item holds `body`. */
export const inItem = (body: string) => nessus([{ name: '192.0.2.10', items: [item({}, body)] }]);

/** One Nuclei result as `nuclei -json-export` writes it, with `extra` fields appended. */
export const nucleiResult = (i: number, extra = '') =>
  `{"template-id":"t${i}","ip":"192.0.2.10","port":"443","info":{"name":"n${i}","severity":"low"}${extra}}`;
