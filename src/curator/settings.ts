/** The curator's thresholds (environment: CAIRN_CURATOR_*_DAYS; see .env.example). */
export interface CuratorSettings {
  /** An agent-made skill unused this many days is marked stale (still usable, marked in the index). */
  staleDays: number;
  /** An agent-made skill unused this many days is archived (restorable with /cairn rollback). */
  archiveDays: number;
  /** An agent-made lesson not shown with any message for this many days is archived. */
  lessonDays: number;
}

export const DEFAULT_CURATOR: CuratorSettings = { staleDays: 14, archiveDays: 30, lessonDays: 60 };
