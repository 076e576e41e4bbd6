/**
 * A function's results remembered by argument, the oldest forgotten past `max` entries. For values
 * that never go stale in a process's life (a compiled statement for its SQL text, the scanner's
 * verdict on a text) and are met again and again; TtlCache is for rows that do go stale.
 */
export function memoize<K, V>(make: (key: K) => V, max: number): (key: K) => V {
  const values = new Map<K, V>();
  return (key) => {
    let value = values.get(key);
    if (value === undefined) {
      value = make(key);
      values.set(key, value);
      if (values.size > max) values.delete(values.keys().next().value!);
    }
    return value;
  };
}
