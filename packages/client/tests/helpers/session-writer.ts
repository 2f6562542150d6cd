import { writeSessionDir } from '../../src/session-dir/write.ts';

/**
 * A writer process for the atomicity test: writes one session of four large files into the
 * root. With a step name as third argument it announces that step on stdout and then blocks,
 * so the test can SIGKILL it exactly there; `done` is printed when the write finished.
 */
const [root, id, stopAt, sizeArg] = process.argv.slice(2) as [string, string, string | undefined, string | undefined];
const size = Number(sizeArg ?? 4_000_000);
const files = ['session_results.json', 'pipeline.log', 'report_acme.html', 'exec_summary_acme.html'].map((name, i) => ({
  name,
  content: String.fromCharCode(97 + i).repeat(size),
}));
process.stdout.write('ready\n');
writeSessionDir(root, id, files, {
  onStep: (step) => {
    if (step !== stopAt) return;
    process.stdout.write(`${step}\n`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  },
});
process.stdout.write('done\n');
