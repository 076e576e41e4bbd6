/**
 * The tools a turn offers the model, and the screen its shared memory and skill writes pass: built once by
 * the core (core.ts) and handed, in this order, to the turn's registry and the reviews (which send
 * the same list so they read the turns' cached prefix).
 */
import type { Scope } from "../ground/types.ts";
import type { Tool } from "../tools/registry.ts";
import { memoryTool } from "../tools/memory.ts";
import { memoryHistoryTool } from "../tools/memory-history.ts";
import type { MemoryHistoryStore } from "../memory/history-store.ts";
import { skillTools, type SkillReach } from "../tools/skills.ts";

export type { SkillReach };
import { sessionSearchTool, type SessionSearchOptions } from "../tools/search.ts";
import { correctionTool } from "../tools/correction.ts";
import { modelScreen, NO_SCREEN, type WriteScreen } from "../safety/screen.ts";

export type { WriteScreen };
import { instrumentModel } from "../agent/model-metrics.ts";
import type { ModelClient } from "../agent/model.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import type { HistoryStore } from "../history/store/store.ts";
import type { AgentSettings } from "./agent-settings.ts";

/** How long a write waits for the screen before it is held unchecked. */
const SCREEN_TIMEOUT_MS = 15_000;

export function writeScreen(s: AgentSettings, model: ModelClient, metrics: Metrics): WriteScreen {
  if (!s.screen?.enabled) return NO_SCREEN;
  return modelScreen(instrumentModel(model, metrics, "screen"), { model: s.screen.model ?? s.summaryModel, timeoutMs: s.screen.timeoutMs ?? SCREEN_TIMEOUT_MS });
}

export interface TurnToolDeps {
  memory: MemoryStore;
  /** What memory said before (issue 27): the memory_history tool reads it. */
  memoryHistory: MemoryHistoryStore;
  skills: SkillStore;
  history: HistoryStore;
  screen: WriteScreen;
  /** Where a shared skill write goes (tools/skill-reach.ts): it passes the same screen. */
  skillReach: SkillReach;
  /** The channels whose kept messages a scope may search. */
  readable(scope: Scope): Promise<string[]>;
  /** A correction typed in words, to the learning loop. */
  recordCorrection: Parameters<typeof correctionTool>[0];
  /** The workspace's zone (CAIRN_TIMEZONE) and clock: session_search reads "yesterday" by them. */
  timeZone?: string;
  now?: () => Date;
  /** A search query's vector (embeddings on and in time), for session_search's vector path. */
  queryVector?: SessionSearchOptions["queryVector"];
}

export function turnTools(d: TurnToolDeps): Tool[] {
  return [memoryTool(d.memory, d.screen) as Tool, memoryHistoryTool(d.memoryHistory) as Tool, ...skillTools(d.skills, d.skillReach), sessionSearchTool(d.history, d.readable, { timeZone: d.timeZone, now: d.now, queryVector: d.queryVector }) as Tool, correctionTool(d.recordCorrection) as Tool];
}
