/**
 * The operations endpoints, as a plain `node:http` handler that answers its own paths and leaves
 * every other request to whatever listens behind it (Slack's `/slack/events` in HTTP mode):
 * - `GET /healthz`: 200 while the process answers at all (its event loop runs).
 * - `GET /readyz`: 200 when the database answers, the migrations are applied and every platform
 *   is connected; 503 otherwise. The JSON body names each check and what is wrong.
 * - `GET /metrics`: Prometheus text format (metrics.ts).
 */
import type http from "node:http";
import type { Logger } from "../ground/log.ts";
import type { Metrics } from "./metrics.ts";
import { readinessCheck, type ReadinessDeps } from "./readiness.ts";

/** Answers the request and returns true, or returns false and leaves it untouched for another listener. */
export type HttpRoutes = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

export const HEALTH_PATH = "/healthz";
export const READY_PATH = "/readyz";
export const METRICS_PATH = "/metrics";

export interface HealthDeps extends ReadinessDeps {
  metrics: Metrics;
  log: Logger;
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  // Probes and scrapers want the present, never a cached answer.
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}

const json = (res: http.ServerResponse, status: number, body: unknown): void => send(res, status, "application/json; charset=utf-8", `${JSON.stringify(body)}\n`);

export function healthRoutes(deps: HealthDeps): HttpRoutes {
  const ready = readinessCheck(deps);
  const answers: Record<string, (res: http.ServerResponse) => Promise<void>> = {
    [HEALTH_PATH]: async (res) => json(res, 200, { status: "ok" }),
    [READY_PATH]: async (res) => {
      const r = await ready();
      json(res, r.ready ? 200 : 503, { status: r.ready ? "ready" : "not ready", checks: r.checks, ...(r.journal ? { journal: r.journal } : {}) });
    },
    [METRICS_PATH]: async (res) => send(res, 200, deps.metrics.contentType, await deps.metrics.expose()),
  };
  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const answer = Object.hasOwn(answers, path) ? answers[path] : undefined;
    if (!answer) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return true;
    }
    answer(res).catch((err: unknown) => {
      deps.log.error({ err, path }, "health endpoint failed");
      if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", "internal error\n");
      else res.destroy();
    });
    return true;
  };
}
