/**
 * What readiness (readiness.ts) asks of the database: that it answers, which migrations it has
 * applied, and which this build knows.
 */
import { z } from "zod";
import type { Database } from "../db/client.ts";
import { loadMigrations } from "../db/migrate.ts";

const AppliedRows = z.array(z.looseObject({ migration_name: z.string() }));

export class MigrationStore {
  private expected: readonly string[] | null = null;

  constructor(private readonly database: Pick<Database, "ping" | "prisma" | "provider">) {}

  /** A round trip; throws when the database cannot be reached or was closed. */
  ping(): Promise<void> {
    return this.database.ping();
  }

  /** The migrations applied to the database (finished, not rolled back). */
  async applied(): Promise<string[]> {
    const rows = AppliedRows.parse(await this.database.prisma.$queryRawUnsafe(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`));
    return rows.map((r) => r.migration_name);
  }

  /** The migrations this build has for the database's provider (read once). */
  known(): readonly string[] {
    return (this.expected ??= loadMigrations(this.database.provider).map((m) => m.name));
  }
}
