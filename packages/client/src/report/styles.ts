import { BRANDING_DEFAULTS, cssColor } from './branding.ts';
import { type Html, trusted } from './html.ts';
import type { Branding } from './types.ts';

/**
 * The report's one stylesheet, inline. The white-label colors are the CSS variables; each is
 * checked again here (a Branding built by hand skips brandingFromEnv), so no value can leave
 * its declaration.
 */

const SHEET = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1f2430;background:#f5f6f8}
header.report-header{background:var(--header-bg);color:var(--header-text);padding:24px 32px;display:flex;gap:20px;align-items:center}
header.report-header img{max-height:56px;max-width:200px}
header.report-header h1{margin:0;font-size:26px}
header.report-header p{margin:2px 0 0;opacity:.9}
main{max-width:1100px;margin:0 auto;padding:16px 32px 32px}
section{background:#fff;border-radius:6px;padding:16px 20px;margin:16px 0;box-shadow:0 1px 2px rgba(0,0,0,.08)}
h2{margin:0 0 12px;font-size:19px;border-bottom:3px solid var(--primary-color);padding-bottom:4px}
h3{font-size:16px;margin:16px 0 6px}
table{border-collapse:collapse;width:100%;margin:6px 0 10px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e3e5ea;vertical-align:top}
th{background:#f0f1f4;font-weight:600}
td.num,th.num{text-align:right}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
.meta dt{font-weight:600}.meta dd{margin:0}
.scores{display:flex;gap:16px;flex-wrap:wrap}
.score{flex:1 1 200px;border:1px solid #e3e5ea;border-radius:6px;padding:12px 16px}
.score .value{font-size:34px;font-weight:700}
.grade{display:inline-block;min-width:2em;text-align:center;border-radius:4px;padding:0 6px;color:#fff;font-weight:700}
.grade-A{background:#198754}.grade-B{background:#5c9e31}.grade-C{background:#c99a06}.grade-D{background:#e8710a}.grade-F{background:#b02a37}
.sev{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;font-weight:600;color:#fff;text-transform:uppercase}
.sev-critical{background:#7b1020}.sev-high{background:#c8311f}.sev-medium{background:#d98b00}.sev-low{background:#3b7dd8}.sev-info{background:#6c757d}
.kev{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;font-weight:600;color:#7b1020;border:1px solid #7b1020;background:#fdecee;text-transform:uppercase}
.bar{height:10px;background:var(--primary-color);border-radius:2px}
.bar-critical{background:#7b1020}.bar-high{background:#c8311f}.bar-medium{background:#d98b00}.bar-low{background:#3b7dd8}.bar-info{background:#6c757d}
.finding{border-left:4px solid var(--primary-color);padding:4px 12px;margin:12px 0}
.finding h3{margin:0 0 4px}
pre.evidence{white-space:pre-wrap;word-break:break-word;background:#f6f7f9;border:1px solid #e3e5ea;padding:6px 8px;margin:4px 0;font-size:12px;max-height:16em;overflow:auto}
.muted{color:#5f6675}
.expired{color:#b02a37;font-weight:600}
.trend svg{width:100%;max-width:720px;height:auto}
.trend-line{fill:none;stroke:var(--primary-color);stroke-width:2.5}
.trend-line-op{fill:none;stroke:#5f6675;stroke-width:2;stroke-dasharray:6 4}
.trend-dot{fill:var(--primary-color)}
.trend-grid{stroke:#e3e5ea;stroke-width:1}
.trend-axis{font-size:11px;fill:#5f6675}
.consultation-section{border:2px solid var(--primary-color)}
#scheduleBtn{background:var(--primary-color);color:#fff;border:0;border-radius:4px;padding:8px 16px;font-size:15px;cursor:pointer}
footer.report-footer{text-align:center;padding:16px 32px 32px;color:#5f6675;font-size:13px}
footer.report-footer a{color:inherit}
@media print{
  body{background:#fff}
  section{box-shadow:none;break-inside:avoid-page;margin:8px 0;padding:8px 0}
  #scheduleBtn,.no-print{display:none}
  header.report-header{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
`;

/** The summary fits one printed page (A4 or Letter): tighter spacing, a smaller chart, two-column scope. */
const EXEC_SHEET = `
.exec main{max-width:900px;padding:8px 24px}
.exec section{margin:10px 0;padding:10px 16px}
.exec .trend svg{max-width:560px}
@media print{
  @page{margin:10mm}
  body.exec{font-size:10.5px;line-height:1.3}
  .exec header.report-header{padding:8px 14px}
  .exec header.report-header h1{font-size:18px}
  .exec main{padding:0 4px}
  .exec section{margin:3px 0;padding:3px 0}
  .exec h2{font-size:13px;margin:0 0 4px}
  .exec .meta{grid-template-columns:max-content 1fr max-content 1fr}
  .exec .score{padding:4px 8px}
  .exec .score .value{font-size:20px}
  .exec th,.exec td{padding:2px 6px}
  .exec table{margin:2px 0 4px}
  .exec p{margin:3px 0}
  .exec ol{margin:2px 0}
  .exec .trend svg{max-width:330px}
  .exec .trend{margin:0}
  .exec footer.report-footer{padding:4px}
}
`;

export function stylesOf(branding: Branding, kind: 'report' | 'exec'): Html {
  const color = (v: string, fallback: string) => cssColor(v) ?? fallback;
  const vars =
    `:root{--primary-color:${color(branding.primaryColor, BRANDING_DEFAULTS.primaryColor)};` +
    `--header-bg:${color(branding.headerBg, BRANDING_DEFAULTS.headerBg)};` +
    `--header-text:${color(branding.headerText, BRANDING_DEFAULTS.headerText)}}`;
  return trusted(`<style>${vars}${SHEET}${kind === 'exec' ? EXEC_SHEET : ''}</style>`);
}
