import { type Html, html } from '../html.ts';
import type { Branding } from '../types.ts';

export function footer(branding: Branding, generatedAt: string | null): Html {
  const contact = [
    branding.footerEmail === null
      ? null
      : html`<a href="${`mailto:${branding.footerEmail}`}">${branding.footerEmail}</a>`,
    branding.footerUrl === null
      ? null
      : html`<a href="${branding.footerUrl}" rel="noopener noreferrer" target="_blank">${branding.footerUrl}</a>`,
  ].filter((x) => x !== null);
  return html`<footer class="report-footer"><p>${branding.footerText}</p>${
    contact.length === 0 ? null : html`<p>${contact.map((c, i) => (i === 0 ? c : html` · ${c}`))}</p>`
  }${generatedAt === null ? null : html`<p class="muted">Scan finished ${generatedAt}</p>`}</footer>`;
}
