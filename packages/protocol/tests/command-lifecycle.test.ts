import { describe, expect, it } from 'vitest';
import {
  cancelMessage,
  COMMAND_STATUSES,
  COMMAND_TRANSITIONS,
  expiredMessage,
  isCancellable,
  mayReportCommandStatus,
} from '../src/index.ts';

/** The command lifecycle's shared rules: what the portal stores and svcd reports, word for word. */
describe('command lifecycle rules', () => {
  it('cancels what has not ended, and only that', () => {
    expect(COMMAND_STATUSES.filter(isCancellable)).toEqual(['pending', 'sent', 'acked']);
    expect(isCancellable('cancelled')).toBe(false);
  });

  it('words a cancellation with and without a reason', () => {
    expect(cancelMessage('ops@example.com', '  change window closed ')).toBe(
      'Cancelled by ops@example.com: change window closed',
    );
    expect(cancelMessage('ops@example.com', '   ')).toBe('Cancelled by ops@example.com');
    expect(cancelMessage('ops@example.com', null)).toBe('Cancelled by ops@example.com');
  });

  it('words an expiry by what had happened to the command', () => {
    const at = new Date('2026-03-01T12:00:00.000Z');
    expect(expiredMessage(at, 'pending')).toBe('Expired at 2026-03-01T12:00:00.000Z before it was delivered');
    expect(expiredMessage(at, 'sent')).toBe('Expired at 2026-03-01T12:00:00.000Z before the agent started it');
  });

  it('the portal may fail a command not started and deliver a sent one again; the agent still may not', () => {
    expect(COMMAND_TRANSITIONS.pending).toEqual(['sent', 'failed']);
    expect(COMMAND_TRANSITIONS.sent).toEqual(['sent', 'acked', 'failed']);
    expect(mayReportCommandStatus('pending', 'failed')).toBe(false);
    expect(mayReportCommandStatus('sent', 'failed')).toBe(false);
    expect(mayReportCommandStatus('sent', 'acked')).toBe(true);
  });
});
