import { describe, expect, it } from 'vitest';
import { ABANDONED, verdictFor } from './leases.ts';

describe('verdictFor (a delivery whose lease expired)', () => {
  const pending = { status: 'pending', runs: 1, enabled: true, client_id: 'acme', subscription_client_id: null };

  it('takes it over while it has runs left and its subscription would receive it now', () => {
    expect(verdictFor(pending, 3)).toEqual({ kind: 'take' });
    expect(verdictFor({ ...pending, runs: 2, subscription_client_id: 'acme' }, 3)).toEqual({ kind: 'take' });
    expect(verdictFor({ ...pending, client_id: null }, 3)).toEqual({ kind: 'take' });
  });

  it('abandons it once its runs are used up (SVC_WEBHOOK_MAX_RUNS 1: never sent twice)', () => {
    expect(verdictFor({ ...pending, runs: 3 }, 3)).toEqual({ kind: 'abandon', reason: ABANDONED.runs(3) });
    expect(verdictFor(pending, 1)).toEqual({
      kind: 'abandon',
      reason: 'abandoned: its run ended without an outcome (the replica sending it stopped first)',
    });
  });

  it('abandons it when its subscription is disabled or now belongs to another client', () => {
    expect(verdictFor({ ...pending, enabled: false }, 3)).toEqual({ kind: 'abandon', reason: ABANDONED.disabled });
    expect(verdictFor({ ...pending, subscription_client_id: 'globex' }, 3)).toEqual({
      kind: 'abandon',
      reason: ABANDONED.moved,
    });
    expect(verdictFor({ ...pending, client_id: null, subscription_client_id: 'acme' }, 3)).toEqual({
      kind: 'abandon',
      reason: ABANDONED.moved,
    });
  });

  it('only drops the lease of a delivery that finished meanwhile', () => {
    for (const status of ['succeeded', 'failed', 'abandoned'])
      expect(verdictFor({ ...pending, status, runs: 9, enabled: false }, 3)).toEqual({ kind: 'drop' });
  });
});
