/**
 * The one rule for a reference URL taken from a session file into something a person may click
 * (the HTML report, the console, the SARIF, DefectDojo and CSV exports): an http or https URL,
 * as the WHATWG URL parser normalises it, else null. `javascript:`, `data:`, `vbscript:`,
 * `file:` and every other scheme are refused whatever their case; the parser drops leading
 * spaces and control characters and tabs or line breaks inside the text, as a browser does,
 * so the scheme judged is the one a browser would follow.
 */
export function httpUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}
