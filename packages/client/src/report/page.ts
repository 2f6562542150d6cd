import { type Html, html } from './html.ts';
import type { Branding } from './types.ts';
import { reportScript } from './sections/script.ts';
import { stylesOf } from './styles.ts';

/**
 * The document around the sections: inline styles, no external reference of any kind, the
 * report script as the body's last element, then the one real closing body tag.
 */
export function page(opts: { title: string; kind: 'report' | 'exec'; branding: Branding; body: Html }): string {
  const doc = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="generator" content="svc scanner"><title>${opts.title}</title>${stylesOf(opts.branding, opts.kind)}</head>
<body class="${opts.kind}">${opts.body}${reportScript()}</body>
</html>
`;
  return doc.value;
}
