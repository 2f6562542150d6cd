/**
 * Route schemas are compiled on their first use, not when the route registers: a portal's
 * start compiled the validators and serializers of every route (about 400 of its 900 ms for the
 * first app of a process), while a request needs one route's. What is not compiled yet is
 * listed here, so that a test can compile every route's schemas and a schema Ajv or
 * fast-json-stringify cannot build fails the suite instead of a first request
 * (packages/portal/tests/route-schemas.test.ts).
 */
const notYetCompiled = new Set<() => void>();

/** `build()` once, when the value is first needed; `force()` builds it now. */
export function lazily<T>(build: () => T): { get(): T } {
  let built: { value: T } | undefined;
  const force = () => {
    // Tried once from this list: a schema that fails to build fails again at its use.
    notYetCompiled.delete(force);
    built ??= { value: build() };
  };
  notYetCompiled.add(force);
  return {
    get() {
      if (built === undefined) force();
      return (built as { value: T }).value;
    },
  };
}

/** Compiles every schema registered so far and not used yet; returns how many. */
export function compileRegisteredSchemas(): number {
  const all = [...notYetCompiled];
  for (const force of all) force();
  return all.length;
}
