import { httpUrl } from '@svc/protocol';
import { describe, expect, it } from 'vitest';

/** The one rule for a followable reference URL (web-link.ts): the report, the console and the exports use it. */

describe('httpUrl', () => {
  it('keeps http and https URLs, as the URL parser normalises them', () => {
    expect(httpUrl('https://weakdh.org/')).toBe('https://weakdh.org/');
    expect(httpUrl('HTTP://Vendor.Example/KB?id=1#x')).toBe('http://vendor.example/KB?id=1#x');
    expect(httpUrl(' \thttps://example.org/a b ')).toBe('https://example.org/a%20b');
    expect(httpUrl('https://example.org')).toBe('https://example.org/');
  });

  it('refuses every other scheme, whatever its case or the whitespace around or inside it', () => {
    for (const text of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      ' javascript:alert(1)',
      '\u0000javascript:alert(1)',
      'jav\tascript:alert(1)',
      'java\r\nscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'Data:image/svg+xml;base64,PHN2Zz4=',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'blob:https://example.org/uuid',
      'ftp://files.example/',
      '//example.org/x',
      'example.org',
      '',
      'https://',
    ])
      expect(httpUrl(text), JSON.stringify(text)).toBeNull();
  });
});
