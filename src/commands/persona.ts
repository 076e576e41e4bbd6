/**
 * `/cairn persona` shows the workspace's team persona; `persona set <text>` and `persona clear`
 * change it (cairn admins only). The text reaches each conversation's next session.
 */
import type { Inbound } from "../ground/types.ts";
import type { CommandReply } from "../ground/commands.ts";
import { workspaceScopeOf, type Place } from "../history/store/store.ts";
import type { Logger } from "../ground/log.ts";
import { isAdmin, type AccessPolicy } from "../admission/access.ts";
import { nameOf } from "../learning/places.ts";
import { PersonaError, type PersonaStore } from "../persona/store.ts";
import type { WriteScreen } from "../safety/screen.ts";
import { scanForWrite } from "../safety/scanner.ts";

/** What `persona` needs: the workspace's persona, and for a change who is an admin. */
export interface PersonaCommandDeps {
  persona: PersonaStore;
  /** The persona is in every prompt: the model-judged screen reads it first (safety/screen.ts). */
  screen: WriteScreen;
  settings: { access: AccessPolicy };
  log: Logger;
}

const BUILT_IN = "No team persona is set: cairn follows its built-in guidance alone. Admins: `persona set <how cairn should speak here, and what it must always do>`.";

export async function personaCommand(deps: PersonaCommandDeps, inbound: Inbound, place: Place, args: readonly string[]): Promise<CommandReply> {
  // Free text (line breaks kept): "set <text>" as one argument, or "set" and the text apart (a form's input).
  const [, sub = "", text0 = ""] = /^(\S*)\s*([\s\S]*)$/.exec(args.join(" ").trim()) ?? [];
  const scope = workspaceScopeOf(place);
  const action = sub.toLowerCase();
  if (action !== "set" && action !== "clear") {
    const persona = await deps.persona.get(scope);
    if (!persona) return { text: BUILT_IN, ephemeral: true };
    const by = await deps.persona.updatedBy(scope, persona);
    return {
      text: `**Team persona** (set by ${nameOf(by)}, ${persona.updatedAt.toISOString().slice(0, 10)}; ${persona.text.length}/${deps.persona.limit} chars)\n${persona.text}\n\`history persona\` lists its changes.`,
      ephemeral: true,
    };
  }
  if (!isAdmin(deps.settings.access, inbound.platform, inbound.author.externalId)) {
    deps.log.info({ user: inbound.author.externalId }, "persona change refused");
    return { text: "Only cairn admins can change the team persona: it shapes every answer in this workspace.", ephemeral: true, outcome: "refused" };
  }
  const text = action === "clear" ? "" : text0;
  if (action === "set" && !text.trim()) return { text: "Usage: `persona set <text>` (or `persona clear`).", ephemeral: true };
  const prov = { source: "tool" as const, actorId: place.person.id, sourceMessageId: null, reason: action === "clear" ? "persona cleared by an admin" : "persona set by an admin" };
  // The patterns first (the store reports what they refuse); then the model-judged screen.
  if (text.trim() && scanForWrite(text).ok) {
    // Only admins set it, and there is no second admin to wait for: held or blocked, it is not saved.
    const screened = await deps.screen.judge({ workspaceId: scope.workspaceId, text, reach: "every conversation in the workspace, as standing instructions" });
    if (screened.verdict !== "allow") {
      deps.log.info({ workspace: scope.workspaceId, verdict: screened.verdict }, "persona change refused by the screen");
      return { text: `Not saved: the safety screen ${screened.verdict === "block" ? "refused" : "held"} it (${screened.reason}). Say how cairn should speak and what it must do for everyone, not rules about particular people.`, ephemeral: true, outcome: "refused" };
    }
  }
  try {
    const change = await deps.persona.set(scope, text, prov);
    deps.log.info({ workspace: scope.workspaceId, change: change.kind }, "team persona changed");
    if (change.kind === "unchanged") return { text: action === "clear" ? BUILT_IN : "The team persona already says exactly that.", ephemeral: true, outcome: "done" };
    if (change.kind === "cleared") return { text: "Cleared the team persona: cairn follows its built-in guidance alone from each conversation's next session.", ephemeral: true, outcome: "done" };
    const redacted = change.redacted.length ? `\nSecrets were redacted before saving (${change.redacted.join(", ")}).` : "";
    return { text: `Saved the team persona; it applies from each conversation's next session (\`new\` starts one now).${redacted}\n${change.persona.text}`, ephemeral: true, outcome: "done" };
  } catch (err) {
    if (err instanceof PersonaError) return { text: `Not saved: ${err.message}`, ephemeral: true, outcome: "refused" };
    throw err;
  }
}
