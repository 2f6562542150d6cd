import { C1, CONTROL, CSI, capture, HOSTILE, OSC_52, OSC_TITLE } from '@svc/test-support/terminal-text';
import { describe, expect, it } from 'vitest';
import { Output } from '../src/cli/output.ts';
import { PortalError } from '../src/kit/portal/errors.ts';
import { printable, printableJson, stripEscapes, terminalText } from '../src/kit/text/printable.ts';

/** Terminal safety of remote text: the rule, and each place svc prints (svcd's: packages/agent/tests/printable.test.ts). */

describe('printable', () => {
  it.each([
    ['OSC title (BEL)', `a${OSC_TITLE}b`, 'ab'],
    ['OSC 52 (ST)', `a${OSC_52}b`, 'ab'],
    ['CSI cursor and erase', `a${CSI}b`, 'ab'],
    ['8-bit CSI and OSC', `a${C1}b`, 'ab'],
    ['a truncated CSI', 'a\u001b[12', 'a'],
    ['two-byte escapes', 'a\u001b(Bb\u001bMc', 'abc'],
    ['bare controls, DEL and C1', 'a\u0007\u0008\u007f\u0085b', 'ab'],
    ['tabs and newlines (kept), CR (dropped)', 'a\tb\r\nc\rd', 'a\tb\ncd'],
  ])('%s', (_label, input, output) => {
    expect(printable(input)).toBe(output);
  });

  it('a single line: line breaks and tabs become one space, surrounding blanks go', () => {
    expect(printable(` Forbidden${HOSTILE}\n\tsecond\u2028line\r `, { multiline: false })).toBe(
      'Forbidden second line',
    );
  });

  it('stripEscapes (command reports) keeps text and line structure, drops sequences and NUL', () => {
    expect(stripEscapes(`x${CSI}\u0000y\r\nz`)).toBe('xy\r\nz');
  });

  it('printableJson escapes DEL, C1 and the line separators JSON.stringify leaves raw, and reads back the same', () => {
    const value = { s: `a${HOSTILE}\u2028` };
    const text = printableJson(value);
    expect(text).not.toMatch(CONTROL);
    expect(text).not.toContain('\u2028');
    expect(text).toContain('\\u009b2K');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('terminalText keeps only color sequences, and only when colors are on', () => {
    expect(terminalText(`\u001b[31mred\u001b[39m ${OSC_TITLE}x`, true)).toBe('\u001b[31mred\u001b[39m x');
    expect(terminalText(`\u001b[31mred\u001b[39m ${OSC_TITLE}x`, false)).toBe('red x');
  });
});

describe('Output', () => {
  it('on a color terminal: its own colors stay, everything a string brought in goes', () => {
    const out = capture(true);
    const err = capture(true);
    const o = new Output({ stdout: out.stream, stderr: err.stream, env: {} });
    o.print(`Share URL: https://p.example/s${HOSTILE}`);
    o.error(`refused${HOSTILE}`);
    o.warn(`careful${OSC_52}`);
    o.info(`${o.err.green('HTTP 200')}${CSI}`);
    expect(out.text()).toBe('Share URL: https://p.example/s\n');
    expect(err.text()).toBe(
      '\u001b[31merror:\u001b[39m refused\n\u001b[33mwarning:\u001b[39m careful\n\u001b[32mHTTP 200\u001b[39m\n',
    );
  });

  it('into a pipe: no escape at all; json() escapes instead of dropping', () => {
    const out = capture(false);
    const err = capture(false);
    const o = new Output({ stdout: out.stream, stderr: err.stream, env: {} });
    o.write(`body${HOSTILE}\n\tindented\n`);
    o.json({ share_url: `u${HOSTILE}` });
    o.error(`e${HOSTILE}`);
    expect(out.text()).not.toMatch(CONTROL);
    expect(out.text().split('\n').slice(0, 2)).toEqual(['body', '\tindented']);
    expect(JSON.parse(out.text().slice(out.text().indexOf('{')))).toEqual({ share_url: `u${HOSTILE}` });
    expect(err.text()).toBe('error: e\n');
  });
});

describe('PortalError', () => {
  it("carries the portal's words as one printable line", () => {
    const err = new PortalError('http', `HTTP 403 Forbidden${HOSTILE}\nnext`, {
      status: 403,
      portalError: `Forbidden${HOSTILE}`,
    });
    expect(err.message).toBe('HTTP 403 Forbidden next');
    expect(err.portalError).toBe('Forbidden');
  });
});
