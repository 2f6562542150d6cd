import { describe, expect, it } from 'vitest';
import { parseRemediationItems, RemediationInputError } from './remediation.ts';

describe('parseRemediationItems', () => {
  const TODAY = '2025-03-04';
  it('accepts the five statuses and keeps a note only when given', () => {
    const items = ['new', 'persistent', 'in_progress', 'resolved', 'deferred'].map((status, i) => ({
      title: `t${i}`,
      status,
    }));
    expect(parseRemediationItems(items, TODAY)).toEqual(items);
    expect(parseRemediationItems([{ title: 't', status: 'new', note: 'n' }], TODAY)).toEqual([
      { title: 't', status: 'new', note: 'n' },
    ]);
  });

  it('names the bad status and its item', () => {
    expect(() =>
      parseRemediationItems(
        [
          { title: 'ok', status: 'new' },
          { title: 'Bad one', status: 'fixed' },
        ],
        TODAY,
      ),
    ).toThrow(
      new RemediationInputError(
        'Invalid status "fixed" for items[1] ("Bad one"): must be one of new, persistent, in_progress, resolved, deferred',
      ),
    );
    for (const status of ['', 'Resolved', 'RESOLVED', ' new', 'open', 'in-progress'])
      expect(() => parseRemediationItems([{ title: 't', status }], TODAY)).toThrow(RemediationInputError);
  });
});
