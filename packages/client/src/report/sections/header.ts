import type { Facts } from '../facts.ts';
import { type Html, html } from '../html.ts';
import type { Branding } from '../types.ts';

export function header(title: string, facts: Facts, branding: Branding): Html {
  const logo =
    branding.logo === null
      ? null
      : html`<img class="logo" alt="Company logo" src="${`data:${branding.logo.mime};base64,${branding.logo.base64}`}">`;
  return html`<header class="report-header">${logo}<div><h1>${title}</h1><p class="subtitle">${branding.subtitle}</p><p>${facts.client === null ? null : html`${facts.client} · `}${facts.target}</p></div></header>`;
}
