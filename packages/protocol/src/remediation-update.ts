import { Type, type Static } from '@sinclair/typebox';
import { DISPOSITIONS, REMEDIATION_STATUSES, RemediationSummary, SessionClientId } from './sessions.ts';

/** PATCH /api/remediation-update (docs/api.md#sessions): its body and answer. */

/** PATCH /api/remediation-update: most items one request may carry. */
export const REMEDIATION_UPDATE_MAX_ITEMS = 1000;

/** Longest exception reason a remediation update may set. */
export const EXCEPTION_REASON_MAX_LENGTH = 2000;

/**
 * A risk exception set on one finding: the approver is the signed-in user and the approval
 * time the request's; null withdraws it.
 */
export const RemediationExceptionChange = Type.Object(
  {
    reason: Type.String({ maxLength: EXCEPTION_REASON_MAX_LENGTH, description: 'justification; not blank' }),
    expiry: Type.String({
      maxLength: 10,
      description: 'last valid day, YYYY-MM-DD (UTC); today or later',
      examples: ['2027-06-30'],
    }),
  },
  { additionalProperties: false },
);
export type RemediationExceptionChange = Static<typeof RemediationExceptionChange>;

/**
 * One item of a remediation update: exactly one of `title` (every entry of that title) or
 * `fingerprint` (one finding), and at least one of `status`, `note` and `exception`. `status`
 * is checked by the portal (not by the schema) so that a bad value is answered with a 400
 * that names it.
 */
export const RemediationUpdateItem = Type.Object(
  {
    title: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description:
          'matched exactly against the title of entries in .remediation[] and .remediation_resolved[]: every entry of that title (on every host) is updated',
      }),
    ),
    fingerprint: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'findings[].fingerprint (64 lower-case hex): the one entry of that finding; an entry without its own fingerprint is matched through its finding (finding_id, else title and host)',
      }),
    ),
    status: Type.Optional(
      Type.String({
        description: `one of ${REMEDIATION_STATUSES.join(', ')}`,
        examples: [...REMEDIATION_STATUSES],
      }),
    ),
    note: Type.Optional(
      Type.String({ maxLength: 10_000, description: "replaces the matched entries' note; not counted in changed" }),
    ),
    exception: Type.Optional(
      Type.Union([RemediationExceptionChange, Type.Null()], {
        description:
          'by fingerprint only, on an open entry: creates or changes its risk exception (accepted, approver the signed-in user, approved now); null withdraws it. Not counted in changed; the operational score is recomputed',
      }),
    ),
    disposition: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              disposition: Type.Union(DISPOSITIONS.map((d) => Type.Literal(d))),
              reason: Type.String({ maxLength: EXCEPTION_REASON_MAX_LENGTH, description: 'required, not blank' }),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        {
          description:
            'by fingerprint only: marks the finding as a false positive (left out of both scores, counted apart from accepted risk); null unmarks it',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type RemediationUpdateItem = Static<typeof RemediationUpdateItem>;

export const RemediationUpdateBody = Type.Object(
  {
    session_id: Type.String({ maxLength: 256, description: 'session id; must match ^[a-zA-Z0-9_-]+$' }),
    client_id: Type.Optional(SessionClientId),
    items: Type.Array(RemediationUpdateItem, { minItems: 1, maxItems: REMEDIATION_UPDATE_MAX_ITEMS }),
  },
  { additionalProperties: false },
);
export type RemediationUpdateBody = Static<typeof RemediationUpdateBody>;

export const RemediationUpdateResult = Type.Object({
  title: Type.Optional(Type.String()),
  fingerprint: Type.Optional(Type.String()),
  matched: Type.Integer({ description: 'entries the item matched (a title can match several hosts; 0: unmatched)' }),
});
export type RemediationUpdateResult = Static<typeof RemediationUpdateResult>;

export const RemediationUpdateResponse = Type.Object({
  success: Type.Literal(true),
  session_id: Type.String(),
  changed: Type.Integer({ description: 'entries whose status changed (moves between the two arrays included)' }),
  remediation_summary: RemediationSummary,
  unmatched: Type.Array(Type.String(), {
    description: 'requested titles and fingerprints that match no entry; they change nothing',
  }),
  results: Type.Array(RemediationUpdateResult, {
    description: 'one per request item, in order: its title or fingerprint and how many entries it matched',
  }),
});
export type RemediationUpdateResponse = Static<typeof RemediationUpdateResponse>;
