import { type Html, trusted } from '../html.ts';

/**
 * The report's only script, the last element of the body. `printableCopy()` builds a
 * standalone copy of the report (styles and main content, no scripts) for printing or saving;
 * that string holds a literal closing body tag, which is valid HTML: inside a script element
 * only `</script` ends the element, so the parser reads the rest as script text. The portal's
 * share page must therefore place its bridge at the LAST closing body tag. The script
 * must never contain `</script` or `<!--` (the parser's only exits from script text).
 *
 * #scheduleBtn opens the contact in data-contact unless the portal's bridge has wired it.
 */
export const REPORT_SCRIPT_SOURCE = `(function () {
  'use strict';
  function printableCopy() {
    var style = document.querySelector('style');
    var main = document.querySelector('main');
    var head = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>' +
      document.title.replace(/[&<>]/g, function (c) { return c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'; }) +
      '</title>' + (style ? style.outerHTML : '') + '</head><body>';
    return head + (main ? main.outerHTML : '') + '</body></html>';
  }
  window.svcReport = { printableCopy: printableCopy };
  var printBtn = document.getElementById('printBtn');
  if (printBtn) printBtn.addEventListener('click', function () { window.print(); });
  var btn = document.getElementById('scheduleBtn');
  if (btn) btn.addEventListener('click', function () {
    if (btn.hasAttribute('data-svc-bridge')) return;
    var contact = btn.getAttribute('data-contact');
    if (contact) window.open(contact, '_blank', 'noopener');
  });
})();`;

if (/<\/script|<!--/i.test(REPORT_SCRIPT_SOURCE)) throw new Error('report script would end its element early');

export function reportScript(): Html {
  return trusted(`<script>${REPORT_SCRIPT_SOURCE}</script>`);
}
