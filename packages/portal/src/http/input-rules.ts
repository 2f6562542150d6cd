/**
 * Rules every input obeys, whatever the route: PostgreSQL cannot store
 * a NUL character (U+0000) nor a lone UTF-16 surrogate in text or JSONB, and deeply nested
 * JSON overflows the stack of anything that walks it recursively (JSON.stringify, the
 * serialiser, the remediation rewrite). Checked once at the edge, iteratively, so no
 * handler ever sees such a value and nothing stored can exceed the depth limit.
 */

export interface InputProblem {
  /** Where the value sits, e.g. `name`, `items.3.id`, `(key of) metadata`; empty for the value itself. */
  path: string;
  message: string;
}

// A NUL, a high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function describeString(s: string): string | null {
  const m = UNSTORABLE.exec(s);
  if (m === null) return null;
  return m[0] === '\u0000' ? 'contains a NUL character' : 'contains an unpaired UTF-16 surrogate';
}

/** A value to check, with where it sits: its container's item and its key or index there. */
interface Item {
  value: unknown;
  parent: Item | null;
  key: string | number;
  depth: number;
}

/** The dotted path of an item, built only for the one a problem is reported at. */
function pathOf(item: Item): string {
  const keys: (string | number)[] = [];
  for (let at: Item = item; at.parent !== null; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}

/**
 * The first problem in a parsed value, or null. Depth counts containers: `{}` is 1,
 * `{"a": []}` is 2. No recursion: an explicit stack, so a hostile value cannot overflow it.
 * With `strings: false` only containers are visited (an upload's file is checked for depth only).
 */
export function findInputProblem(
  value: unknown,
  maxDepth: number,
  opts: { strings?: boolean } = {},
): InputProblem | null {
  const strings = opts.strings ?? true;
  const visited = (v: unknown) => (typeof v === 'object' && v !== null) || (strings && typeof v === 'string');
  const stack: Item[] = [{ value, parent: null, key: '', depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    const v = item.value;
    if (typeof v === 'string') {
      if (!strings) continue;
      const problem = describeString(v);
      if (problem !== null) return { path: pathOf(item), message: `field ${problem}` };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    // Only parsed JSON and parsed query strings: a raw body (a Buffer, a stream) is the route's.
    if (ArrayBuffer.isView(v) || typeof (v as { pipe?: unknown }).pipe === 'function') continue;
    const depth = item.depth + 1;
    if (depth > maxDepth)
      return { path: pathOf(item), message: `JSON is nested too deep (more than ${maxDepth} levels)` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        if (visited(v[i])) stack.push({ value: v[i], parent: item, key: i, depth });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const keyProblem = strings ? describeString(key) : null;
      if (keyProblem !== null) return { path: pathOf(item), message: `field name ${keyProblem}` };
      const child = (v as Record<string, unknown>)[key];
      if (visited(child)) stack.push({ value: child, parent: item, key, depth });
    }
  }
  return null;
}

/** The one-line message for a problem in a request part (`body`, `query`, `params`, `session_json`). */
export function inputProblemMessage(part: string, problem: InputProblem): string {
  const where = problem.path === '' ? '' : ` (at ${truncate(problem.path)})`;
  return `Invalid ${part}: ${problem.message}${where}`;
}

function truncate(path: string): string {
  // A path can be built from hostile field names; keep the message short and printable.
  const printable = path.replace(/[\u0000-\u001f\u007f\uD800-\uDFFF]/g, '?');
  return printable.length > 120 ? `${printable.slice(0, 117)}...` : printable;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route cleans NUL and lone surrogates from its strings itself; the edge checks depth only. */
    keepUnstorableStrings?: boolean;
  }
}
