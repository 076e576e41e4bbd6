/**
 * A guard in front of Bolt's HTTP receiver, for what Bolt lets through:
 * - a signed request whose JSON body is not an object (`null`, a number) reached code that reads
 *   its fields and ended the process; it gets a 400, and so does an interaction (a form body with a
 *   `payload` field, which Bolt parses as the body) whose payload is not a JSON object;
 * - only old timestamps were refused; a request more than five minutes from now in either
 *   direction is refused (401), so a captured request cannot be replayed later either.
 * The body is read once, here, and handed on as `rawBody`, which Bolt uses instead of reading the
 * stream again.
 */
import type http from "node:http";

/** Bolt's own default limit for a request body. */
const BODY_LIMIT = 4 * 1024 * 1024;
const MAX_SKEW_SEC = 5 * 60;

type Refusal = { status: number; why: string };

export function guardedListener(
  inner: http.RequestListener,
  onRefused: (refusal: Refusal & { path: string }) => void,
  now: () => number = Date.now,
): http.RequestListener {
  return (req, res) => {
    void check(req, now).then(
      (refusal) => {
        if (!refusal) return inner(req, res);
        onRefused({ ...refusal, path: req.url ?? "" });
        res.writeHead(refusal.status).end();
      },
      () => {
        if (!res.headersSent) res.writeHead(400).end();
      },
    );
  };
}

async function check(req: http.IncomingMessage, now: () => number): Promise<Refusal | null> {
  if (req.method !== "POST") return null;
  const stamp = req.headers["x-slack-request-timestamp"];
  if (typeof stamp === "string" && /^\d+$/.test(stamp) && Math.abs(now() / 1000 - Number(stamp)) > MAX_SKEW_SEC) {
    return { status: 401, why: "timestamp more than five minutes from now" };
  }
  const body = await readBody(req);
  if (body === null) return { status: 413, why: "body too large" };
  (req as http.IncomingMessage & { rawBody?: Buffer }).rawBody = body;
  const contentType = req.headers["content-type"] ?? "";
  if (contentType.includes("application/json")) return objectOrRefusal(body.toString("utf8"), "body");
  if (contentType.includes("application/x-www-form-urlencoded")) {
    const payload = new URLSearchParams(body.toString("utf8")).get("payload");
    if (payload !== null) return objectOrRefusal(payload, "interaction payload");
  }
  return null;
}

function objectOrRefusal(json: string, what: string): Refusal | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { status: 400, why: `${what} is not JSON` };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return { status: 400, why: `${what} is not a JSON object` };
  return null;
}

/** The whole body, or null past the limit (the rest is drained so the connection stays usable). */
async function readBody(req: http.IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size <= BODY_LIMIT) chunks.push(buf);
  }
  return size > BODY_LIMIT ? null : Buffer.concat(chunks);
}
