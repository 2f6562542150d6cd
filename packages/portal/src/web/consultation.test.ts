import { describe, expect, it } from 'vitest';
import { consultationLink } from './consultation.ts';

const page = (body: string) => `<!DOCTYPE html><html><head><title>r</title></head><body>${body}</body></html>`;

describe('consultationLink', () => {
  it("takes #scheduleBtn's own link first: data-href, href, data-contact (the project's reports)", () => {
    expect(
      consultationLink(
        page(
          '<section id="consultation-section"><a href="https://section.example/">s</a>' +
            '<button id="scheduleBtn" data-contact="mailto:team@example.com">Book</button></section>',
        ),
      ),
    ).toBe('mailto:team@example.com');
    expect(
      consultationLink(
        page('<a id=scheduleBtn href="https://book.example/a?x=1&amp;y=2" data-href=\'https://first.example/\'>b</a>'),
      ),
    ).toBe('https://first.example/');
    expect(consultationLink(page('<a id="scheduleBtn" href="https://book.example/a?x=1&amp;y=&#50;">b</a>'))).toBe(
      'https://book.example/a?x=1&y=2',
    );
  });

  it('else the first https: or mailto: link inside #consultation-section, nested elements included', () => {
    const html = page(
      '<a href="mailto:footer-before@example.com">f</a>' +
        '<div id="consultation-section" class="consultation-section"><div><a href="/relative">r</a><a href="javascript:alert(1)">j</a></div>' +
        '<a href="https://consult.example/book">book</a></div><a href="https://after.example/">a</a>' +
        '<button id="scheduleBtn">Book</button>',
    );
    expect(consultationLink(html)).toBe('https://consult.example/book');
  });

  it('not a link after the section has ended: then the first mailto: link anywhere', () => {
    const html = page(
      '<section id="consultation-section"><section>inner</section><p>Talk to us</p></section>' +
        '<a href="https://after.example/">a</a><footer><a href="mailto:security@example.com">mail</a></footer>',
    );
    expect(consultationLink(html)).toBe('mailto:security@example.com');
  });

  it('ignores markup inside comments and script or style text, and links that are not https: or mailto:', () => {
    const html = page(
      '<!-- <a id="scheduleBtn" href="https://comment.example/"> -->' +
        '<script>var t = \'<a id="scheduleBtn" href="https://script.example/">\'; var e = "</body>";</script>' +
        '<style>a::after { content: "<a href=mailto:style@example.com>"; }</style>' +
        '<button id="scheduleBtn" href="http://plain.example/" data-contact="data:text/html,x">Book</button>' +
        '<a href="mailto:real@example.com">real</a>',
    );
    expect(consultationLink(html)).toBe('mailto:real@example.com');
  });

  it('null when the report names none, and for broken markup', () => {
    expect(consultationLink(page('<button id="scheduleBtn">Book</button>'))).toBeNull();
    expect(consultationLink('<a href="https://unterminated.example/')).toBeNull();
    expect(consultationLink('<a href=')).toBeNull();
    expect(consultationLink('<<<>>> < a href="mailto:x@example.com"> <!-- unterminated')).toBeNull();
  });

  it('reads a large report in one pass', () => {
    const filler = '<p class="finding" data-x="a>b">TLS 1.0 enabled on 10.0.0.5:443</p>\n'.repeat(100_000);
    const html = page(`${filler}<section id="consultation-section"><a href="https://consult.example/">b</a></section>`);
    // About 7 MB, read once (a scanner that backtracked per tag would not finish in the test's time).
    expect(consultationLink(html)).toBe('https://consult.example/');
  });
});
