/**
 * The frame put before a person's message when it is the correction cairn asked for: the model sees
 * which answer was wrong and is told to answer again with the correction applied. The lesson is
 * saved by the lesson job afterwards, so the model is told not to save it itself (it would be
 * saved twice, once without its case).
 */
import type { Turn } from "../agent/prompt.ts";
import { wrapRecalled } from "../tools/search.ts";
import { excerpt } from "../lessons/lesson-case.ts";
import type { ClaimedCorrection } from "./correction-store.ts";

export function withCorrection(turns: Turn[], c: ClaimedCorrection | null): Turn[] {
  const last = turns.at(-1);
  if (!c || !last || last.role !== "user") return turns;
  const earlier = [c.question ? `Question: ${excerpt(c.question, 800)}` : null, `Your answer: ${excerpt(c.wrongAnswer, 1200)}`].filter(Boolean).join("\n");
  const text = [
    "══ CORRECTION ══ The person marked one of your earlier answers as wrong, and you asked what you should have done. Their message below is the correction.",
    wrapRecalled("The answer that was marked wrong, and the question it answered.", earlier, `correction:${c.id}`),
    "Answer the question again with the correction applied; say briefly what you changed. The correction is saved as a lesson automatically: do not save it with the memory tool. ══ END OF CORRECTION ══",
  ].join("\n");
  return [...turns.slice(0, -1), { ...last, content: [{ type: "text", text }, ...last.content] }];
}
