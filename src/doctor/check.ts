/**
 * One line of `cairn doctor`: what was checked, whether it is well, and for a problem what is wrong
 * and how to fix it. Checks never throw: whatever goes wrong becomes a failed line.
 */
export interface CheckLine {
  ok: boolean;
  /** What was checked ("database", "Slack scopes"). */
  label: string;
  /** What was found, or what is wrong. */
  detail: string;
  /** For a problem: what to do about it. */
  fix?: string;
}

export const pass = (label: string, detail: string): CheckLine => ({ ok: true, label, detail });
export const fail = (label: string, detail: string, fix?: string): CheckLine => ({ ok: false, label, detail, ...(fix ? { fix } : {}) });

export function formatLine(line: CheckLine): string {
  return line.ok ? `✓ ${line.label}: ${line.detail}` : `✗ ${line.label}: ${line.detail}${line.fix ? `. Fix: ${line.fix}` : ""}`;
}

export class CheckTimeout extends Error {
  override name = "CheckTimeout";
}

/**
 * Runs a check within `ms`: a server that accepts a connection and then says nothing must not hold
 * the doctor. The checks time-box their own requests too (abort signals, driver timeouts); this is
 * the backstop, and `onTimeout` says which server did not answer.
 */
export async function timeBoxed(ms: number, run: (signal: AbortSignal) => Promise<CheckLine[]>, onTimeout: () => CheckLine[]): Promise<CheckLine[]> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<CheckLine[]>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new CheckTimeout(`no answer within ${ms} ms`));
      resolve(onTimeout());
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error as a short phrase: its code where it has one (ECONNREFUSED), else its message. */
export function errorPhrase(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : null;
  const code = (e: unknown): string | null => {
    const c = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
    return typeof c === "string" ? c : null;
  };
  const named = code(err) ?? code(cause);
  const message = err instanceof Error ? err.message : String(err);
  // fetch says only "fetch failed"; the reason is in its cause.
  const said = cause && message === "fetch failed" ? cause.message : message;
  return named && !said.includes(named) ? `${named}: ${said}` : said;
}

export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
