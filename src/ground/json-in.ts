/**
 * The JSON object in a model's reply, for the calls that ask for one (the report's narrative, the
 * curator's plans, a correction distilled into a rule): code fences and words around it tolerated,
 * its strings made storable (ground/text.ts: a `\u0000` escape is valid JSON but PostgreSQL refuses
 * it). Undefined when there is none; the caller validates the shape.
 */
import { storableStrings } from "./text.ts";

export function jsonIn(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return storableStrings(JSON.parse(text.slice(start, end + 1)) as unknown);
  } catch {
    return undefined;
  }
}
