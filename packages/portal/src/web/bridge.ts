import { Transform } from 'node:stream';

/**
 * The share page's bridge script and where it goes in a report (docs/scanner/report.md). No I/O: the share page streams the stored report through
 * `bridgeInserter`.
 *
 * The bridge goes in front of the LAST closing body tag. A report carries that tag inside
 * a script string too (its own templates), so a first-match replace would put our script
 * inside the report's string literal. Matching is case-insensitive and allows whitespace
 * before `>` (`</BODY >`); a report without a closing body tag gets the bridge appended.
 * Nothing else of the report changes, so `#consultation-section`, `.consultation-section`
 * and `#scheduleBtn` stay exactly as uploaded.
 */

const CLOSING_BODY = /<\/body\s*>/gi;

/** Index in `html` where the bridge goes: the start of the last closing body tag, or the end. */
export function bridgeInsertionIndex(html: string): number {
  let index = -1;
  for (const match of html.matchAll(CLOSING_BODY)) index = match.index;
  return index === -1 ? html.length : index;
}

/** The report with `bridge` inserted at the last closing body tag (appended when there is none). */
export function insertBridge(html: string, bridge: string): string {
  const at = bridgeInsertionIndex(html);
  return html.slice(0, at) + bridge + html.slice(at);
}

/**
 * The same on the stored bytes. Reports are UTF-8 in practice, but decoding a stray
 * invalid byte would replace it; latin1 maps each byte to one character, so the index
 * found in it is a byte offset and the report's bytes pass through untouched.
 */
export function insertBridgeBytes(report: Buffer, bridge: string): Buffer {
  const at = bridgeInsertionIndex(report.toString('latin1'));
  return Buffer.concat([report.subarray(0, at), Buffer.from(bridge, 'utf8'), report.subarray(at)]);
}

/**
 * How much of a report's end the share page holds back to find the last closing body tag.
 * Reports end with `</body></html>` and a few lines at most; 64 KiB leaves room for a
 * long trailing script or comment while keeping memory per view constant.
 */
export const BRIDGE_TAIL_BYTES = 64 * 1024;

/**
 * A stream that passes the report through and inserts `bridge` at the last closing body
 * tag that starts within its last `tailBytes` bytes; with none there, the bridge is
 * appended (as for a report without the tag). Everything before the tail flows on as it
 * arrives, chunk by chunk and uncopied; only the tail (at least `tailBytes`, at most that
 * plus one chunk) is held, so a view's memory does not grow with the report. The output is exactly `insertBridgeBytes`
 * whenever the last tag is in the tail, and the tag may be split across chunks: the
 * tail is searched as one buffer at the end.
 */
export function bridgeInserter(bridge: string, tailBytes: number = BRIDGE_TAIL_BYTES): Transform {
  const bridgeBytes = Buffer.from(bridge, 'utf8');
  let held: Buffer[] = [];
  let heldLength = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      held.push(chunk);
      heldLength += chunk.length;
      // Pass whole chunks on, uncopied, while what stays still covers the last tailBytes.
      while (held.length > 1 && heldLength - held[0]!.length >= tailBytes) {
        const first = held.shift()!;
        heldLength -= first.length;
        this.push(first);
      }
      done();
    },
    flush(done) {
      const tail = Buffer.concat(held, heldLength);
      held = [];
      // Only the last tailBytes are searched, however the chunks fell: a tag that starts
      // there ends there too, and the rule does not depend on chunk sizes.
      const from = Math.max(0, tail.length - tailBytes);
      const at = from + bridgeInsertionIndex(tail.subarray(from).toString('latin1'));
      this.push(Buffer.concat([tail.subarray(0, at), bridgeBytes, tail.subarray(at)]));
      done();
    },
  });
}

export interface BridgeContext {
  sessionId: string;
  /** The portal's public base URL (SVC_BASE_URL): messages go to its origin only. */
  baseUrl: string;
}

/** JSON safe inside a <script> element: no `</script>`, no `<!--`, no line separators. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

/**
 * The bridge script element. The report it goes into is shown inside the share page's
 * sandboxed frame (share-page.ts); the share page around it, not the bridge, says whose
 * report it is (a label inside the report's own document could be removed or covered by
 * the report). In the report's document it wires the "schedule a consultation" button
 * (`#scheduleBtn`): a click is announced to the share page (`postMessage` of
 * `{type: 'svc-share:schedule-consultation', session_id}` to the parent frame, for the
 * portal's origin only: a page the report framed itself in gets nothing), and its default
 * action (a link's navigation) is prevented; the project's reports leave a button marked
 * `data-svc-bridge` to the bridge (packages/client's report script). The share page then opens
 * the consultation contact the stored report names (consultation.ts) and passes the message
 * on to a page of the portal's origin that frames it. The frame may not open windows itself
 * (no `allow-popups`).
 *
 * It runs in the report's opaque origin (the sandbox CSP has no allow-same-origin), so it
 * can reach neither the portal's cookies nor its storage, exactly like the report's own
 * scripts. Values come in as escaped JSON.
 */
export function bridgeScript(context: BridgeContext): string {
  const share = { session_id: context.sessionId, portal_origin: new URL(context.baseUrl).origin };
  return `<script data-svc-share-bridge="1">
(function () {
  'use strict';
  var share = ${scriptJson(share)};
  function wireSchedule() {
    var btn = document.getElementById('scheduleBtn');
    if (!btn) return;
    btn.setAttribute('data-svc-bridge', 'wired');
    btn.addEventListener('click', function (event) {
      event.preventDefault();
      var message = { type: 'svc-share:schedule-consultation', session_id: share.session_id };
      if (window.parent !== window) {
        try { window.parent.postMessage(message, share.portal_origin); } catch (e) { /* no parent to tell */ }
      }
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', wireSchedule);
  else wireSchedule();
})();
</script>
`;
}
