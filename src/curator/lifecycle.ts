/**
 * The deterministic pass: agent-made skills unused for `staleDays` go stale, for `archiveDays` are
 * archived, unless people praised an answer that read them; a stale one used again is active again; agent-made lessons not shown for `lessonDays`
 * are archived. "Unused" counts from the last use, the creation, or a person bringing the item
 * back (policy.ts `lastSeen`), so a never-used skill younger than `staleDays` is left alone and a
 * skill a person restored gets a full period again. Pure: the library and the clock in, changes out.
 */
import type { Change } from "./changes.ts";
import type { Library } from "./library.ts";
import { idleDays, isAgentSkill, mayArchiveLesson } from "./policy.ts";
import type { CuratorSettings } from "../learning/settings.ts";

export function planLifecycle(lib: Library, settings: CuratorSettings, now: Date): Change[] {
  const changes: Change[] = [];
  for (const skill of lib.skills) {
    if (!isAgentSkill(skill, lib.facts)) continue;
    const idle = idleDays(skill, lib.facts, now);
    const days = `unused for ${Math.floor(idle)} days`;
    const base = { type: "skill_status", skillId: skill.id, name: skill.name, from: skill.status } as const;
    // A skill people praised (👍 on an answer that read it) is kept in use however long it rests.
    const praised = skill.successCount > 0;
    if (idle >= settings.archiveDays && !praised) changes.push({ ...base, action: "archive", reason: days });
    else if (idle >= settings.staleDays && skill.status === "active" && !praised) changes.push({ ...base, action: "stale", reason: days });
    else if (idle < settings.staleDays && skill.status === "stale") changes.push({ ...base, action: "reactivate", reason: "used again" });
  }
  for (const entry of lib.entries) {
    if (!mayArchiveLesson(entry, lib.facts)) continue;
    const idle = idleDays(entry, lib.facts, now);
    if (idle >= settings.lessonDays) changes.push({ type: "lesson_archive", entryId: entry.id, text: entry.text, reason: `not shown for ${Math.floor(idle)} days` });
  }
  return changes;
}
