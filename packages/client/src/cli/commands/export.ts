import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EXPORT_FORMATS, type ExportFormat, isExportFormat, parseSessionJson } from '@svc/protocol';
import { exportChunks, replaceFile } from '@svc/protocol/node';
import type { Command } from 'commander';
import { CLIENT_VERSION } from '../../kit/version.ts';
import type { CliContext } from '../context.ts';
import { CliError, Output, usageError } from '../output.ts';

interface ExportOpts {
  format: string;
  output?: string;
}

/** The session file named on the command line: a session directory's session_results.json, or the file itself. */
function sessionFileOf(input: string): string {
  const stat = fs.statSync(input, { throwIfNoEntry: false });
  if (stat === undefined) throw usageError(`${input} does not exist`);
  const file = stat.isDirectory() ? path.join(input, 'session_results.json') : input;
  if (!fs.existsSync(file)) throw usageError(`${input} has no session_results.json`);
  return file;
}

function readSession(file: string): unknown {
  let parsed: ReturnType<typeof parseSessionJson>;
  try {
    parsed = parseSessionJson(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`${file} is not a readable session file: ${(err as Error).message}`, 'failed');
  }
  if ('reason' in parsed) throw new CliError(`${file} is not a readable session file: ${parsed.detail}`, 'failed');
  return parsed.doc;
}

/** Replaces `file` whole, so a failed run leaves no half-written file; not durable: it can be run again. */
async function writeExport(file: string, chunks: Iterable<string>): Promise<void> {
  try {
    await replaceFile(file, chunks, { durable: false, mode: 0o600 });
  } catch (err) {
    throw new CliError(`cannot write ${file}: ${(err as Error).message}`, 'failed');
  }
}

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('export')
    .description("export a session's findings as CSV, SARIF 2.1.0 or DefectDojo generic findings JSON")
    .argument('<session>', 'session directory or session_results.json')
    .requiredOption('-f, --format <format>', `one of ${EXPORT_FORMATS.join(', ')}`)
    .option('-o, --output <file>', 'write to this file instead of standard output');
  cmd.addHelpText(
    'after',
    "\nThe same exports as the portal's GET /api/sessions/{id}/export (docs/exports.md), offline. Findings keep\ntheir fingerprint as identity, so a re-import updates the receiving tool's findings. Exit 0 written; 1 the\nsession file is unreadable or the output cannot be written; 2 usage.",
  );
  cmd.action(async (input: string, opts: ExportOpts) => {
    if (!isExportFormat(opts.format))
      throw usageError(`unknown format ${JSON.stringify(opts.format)}: use one of ${EXPORT_FORMATS.join(', ')}`);
    const format: ExportFormat = opts.format;
    const doc = readSession(sessionFileOf(input));
    const chunks = exportChunks(format, doc, {
      toolVersion: CLIENT_VERSION,
      today: ctx.now().toISOString().slice(0, 10),
    });
    if (opts.output === undefined) {
      const out = new Output(ctx.streams);
      // On a terminal, escape sequences a session file may carry are taken out; into a pipe the file goes as it is.
      if (ctx.streams.stdout.isTTY === true) for (const chunk of chunks) out.write(chunk);
      else await pipeline(Readable.from(chunks), ctx.streams.stdout, { end: false });
      return;
    }
    await writeExport(opts.output, chunks);
    new Output(ctx.streams).info(`wrote ${opts.output}`);
  });
}
