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
