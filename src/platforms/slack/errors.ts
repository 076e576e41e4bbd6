/** What a Web API failure was, for logs: Slack's error code where there is one, else the message. */
import { z } from "zod";

const PlatformErrorSchema = z.looseObject({ code: z.string(), data: z.looseObject({ error: z.string() }) });
const CodedErrorSchema = z.looseObject({ code: z.string(), message: z.string() });

export function slackErrorCode(err: unknown): string {
  const platform = PlatformErrorSchema.safeParse(err);
  if (platform.success) return platform.data.data.error;
  const coded = CodedErrorSchema.safeParse(err);
  if (coded.success) return `${coded.data.code}: ${coded.data.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** Slack answered with `ok: false` (as opposed to a network failure or an HTTP error). */
export function isPlatformError(err: unknown): boolean {
  return PlatformErrorSchema.safeParse(err).success;
}
