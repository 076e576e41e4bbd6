/**
 * The fake Messages API's answer to cairn's contradiction check (learning/contradictions.ts) in
 * tests: a scripted nominator that names, by number, every existing statement giving a different
 * weekday than the new one. Any other request is not a check (`isCheck`).
 */
import { systemText, type RecordedRequest } from "../fakes/anthropic.ts";
import { CONTRADICTION_PROMPT } from "../../src/learning/contradictions.ts";

export const isCheck = (r: RecordedRequest): boolean => systemText(r).includes(CONTRADICTION_PROMPT);

/** The contradiction checker's answer: every existing statement naming a weekday other than the new one's. */
export function weekdayNominator(r: RecordedRequest) {
  const user = JSON.stringify(r.body.messages);
  const [, fresh = "", existing = ""] = /NEW:\\n([\s\S]*?)\\n\\nEXISTING:\\n([\s\S]*)$/.exec(user) ?? [];
  const dayIn = (s: string) => /(Monday|Tuesday|Wednesday|Thursday|Friday)s?/.exec(s)?.[1] ?? null;
  const want = dayIn(fresh);
  const hits = existing
    .split("\\n")
    .map((line) => /^\[(\d+)\] (.*)$/.exec(line))
    .flatMap((m) => (m && want && dayIn(m[2]!) && dayIn(m[2]!) !== want ? [Number(m[1])] : []));
  return { text: JSON.stringify({ contradicts: hits }) };
}

