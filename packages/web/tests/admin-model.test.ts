import { describe, expect, it } from 'vitest';
import { auditQuery, draftLicense, draftUser, draftWebhook, splitList } from '../src/admin/forms.ts';
import { pageLabel, pageOf } from '../src/ui/paging.ts';

const license = {
  tier: 'business',
  client_id: 'acme',
  name: 'Acme main',
  description: '',
  max_sessions: '',
  max_agents: '',
  expires_on: '',
};

describe('pages of a list', () => {
  const list = Array.from({ length: 45 }, (_, i) => i + 1);

  it('cuts pages and clamps the page number', () => {
    expect(pageOf(list, 1, 20)).toMatchObject({ page: 1, pages: 3, total: 45, from: 1, to: 20 });
    const last = pageOf(list, 3, 20);
    expect(last.items).toEqual([41, 42, 43, 44, 45]);
    expect(pageLabel(last)).toBe('41–45 of 45');
    expect(pageOf(list, 9, 20).page).toBe(3);
    expect(pageOf(list, 0, 20).page).toBe(1);
    expect(pageOf(list, Number.NaN, 20).page).toBe(1);
    const empty = pageOf([], 1, 20);
    expect(empty).toEqual({ items: [], page: 1, pages: 1, total: 0, from: 0, to: 0 });
    expect(pageLabel(empty)).toBe('none');
  });
});

describe('license form', () => {
  it('builds the body with optional limits and an end-of-day expiry', () => {
    expect(draftLicense(license)).toEqual({
      ok: true,
      body: { tier: 'business', client_id: 'acme', name: 'Acme main' },
    });
    expect(
      draftLicense({ ...license, description: ' d ', max_sessions: '10', max_agents: '2', expires_on: '2027-01-31' }),
    ).toEqual({
      ok: true,
      body: {
        tier: 'business',
        client_id: 'acme',
        name: 'Acme main',
        description: 'd',
        max_sessions: 10,
        max_agents: 2,
        expires_at: '2027-01-31T23:59:59.999Z',
      },
    });
  });

  it('refuses what the portal would refuse', () => {
    expect(draftLicense({ ...license, tier: 'gold' })).toEqual({
      ok: false,
      message: 'Tier must be one of professional, business, msp',
    });
    expect(draftLicense({ ...license, client_id: '-x' })).toEqual({
      ok: false,
      message: 'Client id must start with a letter or digit and use letters, digits, _ . : @ -',
    });
    expect(draftLicense({ ...license, name: ' ' })).toEqual({
      ok: false,
      message: 'Name is required (at most 200 characters)',
    });
    expect(draftLicense({ ...license, max_agents: '0' })).toEqual({
      ok: false,
      message: 'Max agents must be a whole number from 1 to 1000000000',
    });
    expect(draftLicense({ ...license, expires_on: '2027-02-31x' })).toEqual({
      ok: false,
      message: 'Expiry must be a date',
    });
  });
});

describe('user form', () => {
  const user = {
    email: 'ana@example.com',
    password: 'a-long-password-1',
    role: 'member',
    client_ids: 'acme, beta acme',
  };

  it('builds a scoped member with unique client ids', () => {
    expect(draftUser(user)).toEqual({
      ok: true,
      body: { email: 'ana@example.com', password: 'a-long-password-1', role: 'member', client_ids: ['acme', 'beta'] },
    });
    expect(splitList(' a,,b  c ')).toEqual(['a', 'b', 'c']);
  });

  it('refuses a bad email, a short password, a member without clients, a bad client id', () => {
    expect(draftUser({ ...user, email: 'nope' })).toEqual({
      ok: false,
      message: 'Email must be an address like name@example.com',
    });
    expect(draftUser({ ...user, password: 'short' })).toEqual({
      ok: false,
      message: 'Password must be at least 12 characters',
    });
    expect(draftUser({ ...user, client_ids: '' })).toEqual({
      ok: false,
      message: 'A member needs at least one client id',
    });
    expect(draftUser({ ...user, role: 'admin', client_ids: '' })).toMatchObject({ ok: true });
    expect(draftUser({ ...user, client_ids: 'ok *bad' })).toEqual({
      ok: false,
      message: 'Client id "*bad" must start with a letter or digit and use letters, digits, _ . : @ -',
    });
  });
});

describe('webhook form', () => {
  const hook = {
    url: 'https://hooks.example.com/in',
    event_types: ['command_failed', 'scan_completed'],
    description: '',
    client_id: '',
  };

  it('builds the body with events in the protocol order', () => {
    expect(draftWebhook(hook)).toEqual({
      ok: true,
      body: { url: 'https://hooks.example.com/in', event_types: ['scan_completed', 'command_failed'] },
    });
  });

  it('refuses plain http, no events and a bad client id', () => {
    expect(draftWebhook({ ...hook, url: 'http://hooks.example.com' })).toEqual({
      ok: false,
      message: 'URL must be an https:// address',
    });
    expect(draftWebhook({ ...hook, url: 'not a url' })).toMatchObject({ ok: false });
    expect(draftWebhook({ ...hook, event_types: ['ping'] })).toEqual({
      ok: false,
      message: 'Choose at least one event',
    });
    expect(draftWebhook({ ...hook, client_id: 'a b' })).toMatchObject({ ok: false });
  });
});

describe('audit filters', () => {
  it('builds the query', () => {
    expect(auditQuery({ days: '7', type: 'license_created', session: '' }, 500)).toEqual({
      ok: true,
      body: { days: 7, type: 'license_created', limit: 500 },
    });
    expect(auditQuery({ days: '', type: '', session: '20261125_101500' }, 1000)).toEqual({
      ok: true,
      body: { session: '20261125_101500', limit: 1000 },
    });
  });

  it('refuses days outside 1-90, an unknown type and a bad session id', () => {
    expect(auditQuery({ days: '91', type: '', session: '' }, 1)).toEqual({
      ok: false,
      message: 'Days must be a whole number from 1 to 90',
    });
    expect(auditQuery({ days: '', type: 'nope', session: '' }, 1)).toEqual({
      ok: false,
      message: 'Unknown event type',
    });
    expect(auditQuery({ days: '', type: '', session: '../x' }, 1)).toEqual({
      ok: false,
      message: 'Session id uses letters, digits, _ and - only',
    });
  });
});
