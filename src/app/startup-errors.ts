/**
 * What stops start-up, said in one sentence with what to fix, instead of a stack trace: the
 * database cannot be reached or opened, a port is taken, a platform refused its token. Anything
 * else is a bug and keeps its stack.
 */
export class StartupError extends Error {
  override name = "StartupError";
}

type Coded = { code?: unknown; address?: unknown; port?: unknown };

function codeOf(err: unknown): string {
  return typeof err === "object" && err !== null && typeof (err as Coded).code === "string" ? ((err as Coded).code as string) : "";
}

/** Why the database at `url` could not be opened, and what to do about it. */
export function databaseProblem(url: string, err: unknown): string {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (/^postgres(?:ql)?:/i.test(url)) {
    let where = "the server in DATABASE_URL";
    let database = "";
    try {
      const u = new URL(url);
      where = `${u.hostname}:${u.port || "5432"}`;
      database = decodeURIComponent(u.pathname.replace(/^\//, ""));
    } catch {
      // An unparsable URL: the driver's own message says what is wrong with it.
    }
    if (["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "EHOSTUNREACH", "EAI_AGAIN"].includes(code)) {
      return `could not reach PostgreSQL at ${where} (${code}): start it, or point DATABASE_URL at a running server.`;
    }
    if (code === "3D000") return `PostgreSQL at ${where} has no database "${database}": create it (createdb ${database}) or fix DATABASE_URL.`;
    if (code === "28P01" || code === "28000") return `PostgreSQL at ${where} refused the user in DATABASE_URL (${message}): fix the user or password.`;
    return `could not open the PostgreSQL database at ${where}: ${message}.`;
  }
  const path = url.replace(/^file:/, "");
  // Its folder could not be made (file:/proc/..., a file where a folder should be, no permission).
  const { syscall, path: folder } = (typeof err === "object" && err !== null ? err : {}) as { syscall?: unknown; path?: unknown };
  if (syscall === "mkdir" && typeof folder === "string") {
    return `could not create the folder ${folder} for the SQLite file ${path} (${code}): set DATABASE_URL to a file in a folder cairn may write.`;
  }
  if (code.startsWith("SQLITE_CANTOPEN") || ["EACCES", "EROFS", "ENOTDIR", "EISDIR", "EPERM"].includes(code)) {
    return `could not open the SQLite file ${path} (${code}): make sure its folder exists and is writable, or set DATABASE_URL to another file.`;
  }
  return `could not open the SQLite database ${path}: ${message}.`;
}

/**
 * A port already taken (or not allowed), said as such; null for any other error. `setting`: the
 * variable that chose the port; `hostSetting`: the one that chose the address, if any.
 */
export function listenProblem(err: unknown, port: number, setting = "PORT", hostSetting?: string): string | null {
  const code = codeOf(err);
  if (code === "EADDRINUSE") return `port ${port} is already in use: stop what holds it, or set ${setting} to a free one.`;
  if (code === "EACCES") return `not allowed to listen on port ${port}: use a port above 1023, or set ${setting}.`;
  if (hostSetting && (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")) return `cannot listen on port ${port}: ${hostSetting} is not an address of this machine (${code}); fix it or unset it.`;
  return null;
}

/**
 * The model API refused ANTHROPIC_API_KEY at the start-up check (`status`: 401 or 403). Named with
 * its endpoint when ANTHROPIC_BASE_URL points elsewhere: a gateway may want its own key.
 */
export function keyRefusedProblem(status: number | undefined, baseURL: string | undefined): string {
  const where = baseURL ? `the model API at ${baseURL}` : "the Anthropic API";
  const code = status !== undefined ? ` (${status})` : "";
  return `${where} refused ANTHROPIC_API_KEY${code}: set a valid key (console.anthropic.com, API keys), or CAIRN_CHECK_KEY=off to start without checking it.`;
}
