/**
 * A list filter: "Any" (the empty value) or one of `options`, in a labelled field. `onChange`
 * gets the chosen value ('' for Any).
 */
export function AnySelect(props: {
  label: string;
  value: string;
  options: readonly string[];
  onChange: (value: string) => void;
  class?: string;
}) {
  return (
    <label class={props.class}>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">Any</option>
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The chosen option as its own type, or undefined for Any (a value not among `options` is Any too). */
export function chosenOf<T extends string>(value: string, options: readonly T[]): T | undefined {
  return options.find((o) => o === value);
}
