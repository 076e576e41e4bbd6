/** The journal's errors: every message is one sentence a person can act on, never a stack trace. */

/** The folder cannot be used: the message names the folder, the cause and the setting CAIRN_JOURNAL_DIR. */
export class JournalOpenError extends Error {
  override name = "JournalOpenError";
}

export type JournalWriteReason = "full" | "io" | "closed";

/** An append was not made durable (disk error, the journal is full, or closed): the caller must NOT acknowledge the event. */
export class JournalWriteError extends Error {
  override name = "JournalWriteError";
  constructor(
    readonly reason: JournalWriteReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const CAUSES: Record<string, string> = {
  ENOTDIR: "not a folder",
  EISDIR: "a folder is in the way",
  EEXIST: "a file is in the way",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EIO: "input/output error",
  EMFILE: "too many open files",
  ENAMETOOLONG: "name too long",
  ELOOP: "too many symbolic links",
};

/** A file system error's cause, short and on one line: "ENOTDIR: not a folder". */
export function causeText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === "string") return `${code}: ${CAUSES[code] ?? code.toLowerCase()}`;
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, " ").trim() || "unknown error";
}

/** The folder is not writable (mkdir, LOCK or the segment failed). */
export function unwritable(dir: string, err: unknown): JournalOpenError {
  return new JournalOpenError(`cannot write its journal in ${dir} (${causeText(err)}): make that folder writable, or set CAIRN_JOURNAL_DIR to one that is.`, { cause: err });
}
