import { useLayoutEffect, useState } from 'preact/hooks';

/**
 * Form fields edited apart from the view they apply to (filters applied on Enter), shown
 * again whenever the view changes elsewhere (Clear, a link, back and forward). The sync runs
 * in the commit of the render that changed the view, not after paint: a deferred one would
 * erase what was typed in between.
 */
export function useDraft<T>(view: T): [T, (next: T) => void] {
  const [draft, setDraft] = useState(view);
  const key = JSON.stringify(view);
  useLayoutEffect(() => setDraft(view), [key]);
  return [draft, setDraft];
}
