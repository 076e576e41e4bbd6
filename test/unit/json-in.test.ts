/** The JSON object in a model's reply: found among words and fences, its strings made storable. */
import { expect, it } from "vitest";
import { jsonIn } from "../../src/ground/json-in.ts";

it("finds the object in words and fences, and makes escapes PostgreSQL refuses storable", () => {
  const reply = 'Here is the plan:\n```json\n{"rule": "ALWAYS quote \\"a\\u0000b\\"", "ids": ["x\\ud83d", 3], "nested": {"k\\u0000": null}}\n```\nDone.';
  expect(jsonIn(reply)).toEqual({ rule: 'ALWAYS quote "a\u2400b"', ids: ["x\uFFFD", 3], nested: { "k\u2400": null } });
});

it("is undefined when the reply holds no object or a broken one", () => {
  expect(jsonIn("no json here")).toBeUndefined();
  expect(jsonIn('{"rule": "unterminated}')).toBeUndefined();
  expect(jsonIn("} backwards {")).toBeUndefined();
});
