/**
 * The admins' side of a refused model key (issue 28): the person asking is told plainly
 * (ground/replies.ts), and the admins of that platform (CAIRN_ADMINS) get a DM, at most once an
 * hour per platform and process, so a revoked key is fixed before the whole team has met the reply,
 * and an hour of refused questions is not an hour of DMs. Per platform: one process serving Slack
 * and Discord tells Discord's admins too when the first refusal of the hour was on Slack.
 */
import type { PostTarget } from "../ground/adapter.ts";
import type { Logger } from "../ground/log.ts";
import { errText } from "../ground/log.ts";
import { MODEL_KEY_REFUSED_ADMIN_NOTICE } from "../ground/replies.ts";
import type { Platform } from "../ground/types.ts";
import type { AccessPolicy } from "../admission/access.ts";
import type { Place } from "../history/store/store.ts";
import { adminsOn } from "../learning/remind-job.ts";

const HOUR_MS = 3_600_000;

export interface KeyAlarmDeps {
  access: AccessPolicy;
  post(platform: Platform, target: PostTarget, markdown: string): Promise<unknown>;
  log: Logger;
  now: () => Date;
}

export class KeyAlarm {
  /** When each platform's admins were last told. */
  private readonly lastAt = new Map<Platform, number>();

  constructor(private readonly deps: KeyAlarmDeps) {}

  /** A turn met a refused key at `place`. Never throws; the turn does not wait for the DMs. */
  raise(place: Place): void {
    const now = this.deps.now().getTime();
    const platform = place.workspace.platform as Platform;
    const last = this.lastAt.get(platform);
    if (last !== undefined && now - last < HOUR_MS) return;
    this.lastAt.set(platform, now);
    const admins = adminsOn(this.deps.access, platform);
    this.deps.log.error({ admins: admins.length }, "the model API refused ANTHROPIC_API_KEY; an admin needs to fix it");
    for (const person of admins) {
      this.deps.post(platform, { kind: "dm", workspace: place.workspace.externalId, person }, MODEL_KEY_REFUSED_ADMIN_NOTICE).catch((err: unknown) => {
        this.deps.log.warn({ err: errText(err), admin: person }, "could not tell an admin the model key was refused");
      });
    }
  }
}
