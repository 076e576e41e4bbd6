/**
 * `/cairn keep new|old|both <id>`: a person says which of two contradicting entries is right
 * (memory/conflict-store.ts). <id> is either entry of the pair, as the question cairn asked
 * names it. Anyone who can read both entries where they ask may settle it: a team fact against a
 * channel's, anyone in that channel; a profile's, its person. The answer is posted where it was
 * asked, so the place that saw the question sees what became of it.
 */
import type { CommandReply } from "../ground/commands.ts";
import type { Place } from "../history/store/store.ts";
import type { Learning } from "../learning/learning.ts";

export interface ConflictDeps {
  learning: Pick<Learning, "settleConflict">;
}

export const KEEP_VERDICTS = { new: "new", old: "old", both: "both" } as const;

/** Whether `keep`'s first argument asks about a conflict (else it is `keep <id>` of a doubtful rule). */
export const isConflictVerdict = (word: string | undefined): word is keyof typeof KEEP_VERDICTS => word !== undefined && Object.hasOwn(KEEP_VERDICTS, word.toLowerCase());

export async function keepConflict(deps: ConflictDeps, place: Place, verdict: keyof typeof KEEP_VERDICTS, id: string | undefined): Promise<CommandReply> {
  if (!id) return { text: "Usage: `keep new <id>`, `keep old <id>` or `keep both <id>`, with the id in cairn's question (the team view lists open ones).", ephemeral: true };
  const settled = await deps.learning.settleConflict(place, verdict, id);
  if (settled.kind === "not_found") return { text: `No open disagreement you can see here has the id ${id}: it was settled already, or it is about memory this place does not read.`, ephemeral: true, outcome: "not_found" };
  if (settled.kind !== "done") return { text: "Someone settled it a moment ago (or one of the two entries changed): nothing more to do.", ephemeral: true, outcome: "not_found" };
  const { newer, older } = settled.pair;
  const text =
    verdict === "both"
      ? `Both hold: "${newer.text}" and "${older.text}" stay, no longer marked as disagreeing.`
      : verdict === "new"
        ? `Kept the new one: "${newer.text}". The old text ("${older.text}") is kept in history, no longer in force (\`/cairn rollback\` on its history brings it back).`
        : `Kept the old one: "${older.text}". The new text ("${newer.text}") is kept in history, no longer in force.`;
  return { text, ephemeral: false, outcome: "done" };
}
