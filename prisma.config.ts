// Prisma CLI configuration, for developers authoring migrations (the bot applies migrations itself
// at startup and never runs the CLI). Pick the provider with CAIRN_PRISMA_PROVIDER=sqlite|postgresql.
// On machines that cannot download Prisma's schema engine, see README "Authoring migrations".
import { defineConfig } from "prisma/config";

const provider = process.env.CAIRN_PRISMA_PROVIDER === "postgresql" ? "postgresql" : "sqlite";
const url =
  process.env.DATABASE_URL ??
  (provider === "postgresql" ? "postgresql://postgres@127.0.0.1:5432/cairn_dev" : "file:./data/dev.db");

export default defineConfig({
  schema: `prisma/${provider}/schema.prisma`,
  migrations: { path: `prisma/${provider}/migrations` },
  datasource: { url },
  experimental: { externalTables: true },
  // The SQLite full-text indexes (FTS5 Porter, FTS5 trigram for CJK) are made by hand in migrations;
  // listed here, with their shadow tables, so `migrate dev` keeps them.
  tables: {
    external: provider === "sqlite" ? ["message_fts", "message_trgm", "knowledge_fts"].flatMap((t) => [t, ...["data", "idx", "docsize", "config"].map((s) => `${t}_${s}`)]) : [],
  },
});
