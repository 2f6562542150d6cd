import { describe, expect, it } from 'vitest';
import { passwordWeakness } from './password-strength.ts';

// The estimator knows the account's e-mail, the portal's host and the
// product's words, and refuses season/year patterns zxcvbn alone rated strong enough.
const context = { email: 'jane.doe@acme-corp.example', host: 'scans.acme-corp.example' };
const DATED =
  /^Password is too weak: a season, month or year with the product name, the e-mail address or the portal host around it is easy to guess\.$/;

describe('passwordWeakness', () => {
  it.each([
    'Winter2026!!!',
    'svc-portal-2026',
    'jane.doe2026',
    'Jane.Doe-2026!',
    'acmecorp2026',
    'Summer-2025!',
    'scan-portal-2026!',
    'October2026-svc',
    'scans.acme-corp.example2026',
  ])('refuses %s', (password) => {
    const why = passwordWeakness(password, context);
    expect(why).toMatch(DATED);
    expect(why).not.toContain(password);
  });

  it("refuses the portal's host without a date too (a dictionary word now)", () => {
    expect(passwordWeakness('scans.acme-corp.example', context)).toMatch(/^Password is too weak \(strength [0-2] of 4/);
    expect(passwordWeakness('scans.acme-corp.example', {})).toBeNull();
  });

  it.each([
    'correct horse battery staple',
    'Tr0ub4dour&3x-kestrel',
    'Winter-orbit-lantern-quarry-2026',
    'pw-3f2019a1c2b7d6e5',
    'admin-password-0123',
  ])('accepts %s', (password) => {
    expect(passwordWeakness(password, context)).toBeNull();
  });

  // The estimator tries few letter-for-digit swaps (a long password costs it milliseconds, not
  // seconds: bench/password-check.ts); common words written that way stay weak.
  it.each(['P@ssw0rd!', 'p@$$w0rd123', 'S3cur1ty!', '4dm1n1str4t0r', 'C0mpl1c@t3d', 'm0nk3y$', 'W3lc0m3@2024'])(
    'refuses the swapped letters of %s',
    (password) => {
      expect(passwordWeakness(password, {})).toMatch(/^Password is too weak/);
    },
  );

  it('rates the longest password the API takes (1,024 characters): a repeated one is weak, words are strong', () => {
    expect(passwordWeakness('Kestrel-orbit-lantern-quarry-'.repeat(36).slice(0, 1024), context)).toBeNull();
    expect(passwordWeakness('ab'.repeat(512), context)).toMatch(/^Password is too weak/);
  });
});
