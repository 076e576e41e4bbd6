/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL), which a test can make refuse
 * connections or hang, as a database outage looks from cairn's side:
 * - `refuse()`: stops listening (new connections get ECONNREFUSED) and cuts the open ones;
 * - `hang()`: connections stay open, but nothing passes either way (new ones are accepted and held),
 *   as with a server that stopped answering; `pass()` lets everything held through, in order.
 */
import net from "node:net";

export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  refuse(): Promise<void>;
  hang(): void;
  pass(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
  /** Bytes held while hanging, each way. */
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: "pass" | "hang" | "refuse" = "pass";
  const pairs = new Set<Pair>();

  const connectUpstream = (pair: Pair): void => {
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on("data", (d: Buffer) => (mode === "hang" ? pair.toClient.push(d) : pair.client.write(d)));
    upstream.on("error", () => pair.client.destroy());
    upstream.on("close", () => pair.client.destroy());
    flush(pair);
  };
  const flush = (pair: Pair): void => {
    if (pair.upstream) for (const d of pair.toUpstream.splice(0)) pair.upstream.write(d);
    for (const d of pair.toClient.splice(0)) pair.client.write(d);
  };

  const onConnection = (client: net.Socket): void => {
    const pair: Pair = { client, upstream: null, toUpstream: [], toClient: [] };
    pairs.add(pair);
    client.on("data", (d: Buffer) => (mode === "hang" || !pair.upstream ? pair.toUpstream.push(d) : pair.upstream.write(d)));
    client.on("error", () => pair.upstream?.destroy());
    client.on("close", () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (mode === "pass") connectUpstream(pair);
  };

  let server = net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;

  const listen = async (): Promise<void> => {
    server = net.createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  };
  const stopListening = (): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

  return {
    port,
    through(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async refuse() {
      if (mode === "refuse") return;
      mode = "refuse";
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      await stopListening();
    },
    hang() {
      if (mode === "refuse") throw new Error("hang() after refuse(): pass() first");
      mode = "hang";
    },
    async pass() {
      const was = mode;
      mode = "pass";
      if (was === "refuse") return listen();
      for (const pair of pairs) {
        if (!pair.upstream) connectUpstream(pair);
        else flush(pair);
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      if (mode !== "refuse") await stopListening();
    },
  };
}
