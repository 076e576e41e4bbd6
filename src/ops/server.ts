/**
 * The small server of `CAIRN_HEALTH_PORT`: only the operations endpoints (health.ts), in every
 * mode, apart from the port Slack posts to.
 */
import http from "node:http";
import type { HttpRoutes } from "./health.ts";

export interface HealthServer {
  /** The bound port (useful when 0 asked for a free one). */
  readonly port: number;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  port: number;
  /** Unset: every interface, as Slack's HTTP mode listens. */
  host?: string;
}

/** Listens, or rejects with the listen error (EADDRINUSE, EACCES) for start-up to explain. */
export async function startHealthServer(routes: HttpRoutes, opts: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    if (!routes(req, res)) res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const listening = (): void => {
      server.off("error", reject);
      resolve();
    };
    if (opts.host) server.listen(opts.port, opts.host, listening);
    else server.listen(opts.port, listening);
  });
  const address = server.address();
  const port = address && typeof address === "object" ? address.port : opts.port;
  let closed: Promise<void> | null = null;
  return {
    port,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Scrapers keep connections alive; without this, close() would wait for them to time out.
        server.closeAllConnections();
      })),
  };
}
