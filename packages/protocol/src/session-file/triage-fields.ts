import { Type } from '@sinclair/typebox';
import { DECISION_SOURCES, DISPOSITIONS } from '../sessions.ts';
import { literals, nullable, opt, text, timestamp } from './schema-parts.ts';

/**
 * The fields a remediation entry carries beside the documented ones (docs/session-file.md#triage): where the
 * finding is, who decided, the false-positive disposition and the dates of the finding of
 * record. A reader of the documented format ignores them; its closed fields keep their values.
 */

export const TRIAGE_ENTRY_FIELDS = {
  port: opt(nullable(Type.Integer({ minimum: 0, maximum: 65535, description: 'Port of the finding' }))),
  protocol: opt(nullable(text('Transport of the port (tcp, udp)'))),
  exception_source: opt(
    nullable(literals(DECISION_SOURCES, 'Who set the exception: a person, an uploaded file, or the migration')),
  ),
  exception_claimed_approver: opt(
    nullable(text('For an exception an uploaded file set: the approver the file named (not an approval)')),
  ),
  status_source: opt(nullable(literals(DECISION_SOURCES, 'Who set the status'))),
  status_by: opt(nullable(text('The person, key or session that set the status'))),
  disposition: opt(nullable(literals(DISPOSITIONS, 'false_positive: not a real weakness; left out of both scores'))),
  disposition_reason: opt(nullable(text('Why it is not real'))),
  disposition_by: opt(nullable(text('Who said so'))),
  disposition_at: opt(nullable(timestamp('When'))),
  last_seen: opt(nullable(text('Session id where the finding was last seen'))),
  resolved_at: opt(nullable(timestamp('When it was last resolved'))),
  reopened_at: opt(nullable(timestamp('When it was last seen again after being resolved'))),
  due_date: opt(
    nullable(
      Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Remediation due date by severity, YYYY-MM-DD' }),
    ),
  ),
};
