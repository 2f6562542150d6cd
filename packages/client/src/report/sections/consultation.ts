import { type Html, html } from '../html.ts';
import type { Branding } from '../types.ts';

/**
 * The consultation block the portal's share bridge looks for (id and class
 * `consultation-section`, button `scheduleBtn`). Outside the portal the button opens the
 * footer's contact (the inline script reads data-contact).
 */
export function consultation(branding: Branding): Html {
  const contact =
    branding.footerEmail !== null
      ? `mailto:${branding.footerEmail}`
      : branding.footerUrl !== null
        ? branding.footerUrl
        : null;
  return html`<section id="consultation-section" class="consultation-section"><h2>Next step: a remediation consultation</h2><p>Walk through these results with a consultant and agree on a remediation plan.</p><button id="scheduleBtn" type="button"${contact === null ? null : html` data-contact="${contact}"`}>Schedule a consultation</button></section>`;
}
