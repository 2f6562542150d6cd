import { isValidSessionId, MAX_SESSION_ID_LENGTH, SESSION_ID_PATTERN } from '../session-id.ts';
import { isObj } from './read.ts';

/**
 * What makes a document a session file the portal takes (docs/session-file.md#the-session-id):
 * JSON (a leading byte-order mark allowed), an object, and a valid session id in
 * `metadata.session_id` or, for very old files, a top-level `session_id`. Everything else in
 * the file is optional. The portal's upload applies it to `session_json`; `svc upload` applies
 * it on the host before it sends anything.
 */

export type SessionFileRefusal =
  | { reason: 'not_json'; detail: string }
  | { reason: 'not_object'; found: 'an array' | 'a string' | 'a number' | 'a boolean' | 'null' }
  | { reason: 'no_session_id' }
  | { reason: 'invalid_session_id'; value: string };

/** The document of a session file's text, or why it is not JSON. */
export function parseSessionJson(text: string): { doc: unknown } | (SessionFileRefusal & { reason: 'not_json' }) {
  try {
    return { doc: JSON.parse(text.replace(/^\uFEFF/, '')) as unknown };
  } catch (err) {
    return { reason: 'not_json', detail: (err as Error).message };
  }
}

const kindOf = (v: unknown): (SessionFileRefusal & { reason: 'not_object' })['found'] =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'string'
        ? 'a string'
        : typeof v === 'number'
          ? 'a number'
          : 'a boolean';

/** The session id of a parsed file: `metadata.session_id` (a non-empty string), else a top-level `session_id`. */
export function sessionIdOfFile(doc: unknown): { id: string } | SessionFileRefusal {
  if (!isObj(doc)) return { reason: 'not_object', found: kindOf(doc) };
  // A wrong-typed metadata.session_id counts as absent, like every other field.
  const fromMetadata = isObj(doc['metadata']) ? doc['metadata']['session_id'] : undefined;
  const id = typeof fromMetadata === 'string' && fromMetadata !== '' ? fromMetadata : doc['session_id'];
  if (typeof id !== 'string' || id === '') return { reason: 'no_session_id' };
  if (!isValidSessionId(id)) return { reason: 'invalid_session_id', value: id };
  return { id };
}

/** The refusal in words that fit after "it …" (`svc upload`: "<file> is not a session file: it …"). */
export function sessionFileRefusalText(r: SessionFileRefusal): string {
  switch (r.reason) {
    case 'not_json':
      return `is not JSON (${r.detail})`;
    case 'not_object':
      return `is ${r.found}, not a JSON object`;
    case 'no_session_id':
      return 'has no metadata.session_id';
    case 'invalid_session_id':
      return `has the session id ${JSON.stringify(r.value.length > 64 ? `${r.value.slice(0, 64)}…` : r.value)}, which is not one (${SESSION_ID_PATTERN}, at most ${MAX_SESSION_ID_LENGTH} characters)`;
  }
}
