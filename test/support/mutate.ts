/**
 * Hostile variants of a well-formed payload, for tests that feed a platform's payloads with fields
 * taken away or replaced by values of the wrong kind (hostile text, deep nesting, prototype keys).
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Values of every wrong kind a field could hold. */
export function hostileValues(rand: () => number): Json[] {
  let deep: Json = "bottom";
  for (let i = 0; i < 200; i++) deep = { d: deep };
  return [
    null,
    0,
    -1,
    1e308,
    true,
    "",
    " ",
    "\u0000",
    "ok\ud800",
    "\u200b\u200b",
    "x".repeat(70_000),
    "<!channel> <!everyone> <!subteam^S1>",
    "1796173576.584100",
    "not-a-ts",
    [],
    [null],
    {},
    { __proto__: { admin: true } } as unknown as Json,
    JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}') as Json,
    deep,
    String(Math.floor(rand() * 1e9)),
  ];
}

/** A copy of `value` with one field (at any depth) removed or replaced by a hostile value. */
export function mutate(value: Json, rand: () => number, hostile: Json[]): Json {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  const holders: { [key: string]: Json }[] = [];
  const walk = (v: Json) => {
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) return v.forEach(walk);
    holders.push(v);
    Object.values(v).forEach(walk);
  };
  walk(copy);
  const times = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < times && holders.length; i++) {
    const holder = holders[Math.floor(rand() * holders.length)]!;
    const keys = Object.keys(holder);
    if (!keys.length) continue;
    const key = keys[Math.floor(rand() * keys.length)]!;
    if (rand() < 0.3) delete holder[key];
    else holder[key] = hostile[Math.floor(rand() * hostile.length)]!;
  }
  return copy;
}
