/**
 * A model's rows read below Prisma (direct.ts) as Prisma would have returned them: the columns and
 * how each is read are listed once, by the store that reads them, and checked by the compiler against
 * the model's type; this makes the select list and the objects. Times come back as `Date` (PostgreSQL's
 * as epoch milliseconds, `timeColumn`), SQLite's 0 and 1 as booleans, numbers as numbers.
 */
import { timeColumn } from "./direct.ts";
import type { Provider } from "./migrate.ts";

export type ColumnKind = "text" | "int" | "float" | "bool" | "time";

export interface TypedRows<T> {
  /** The select list, columns in the listed order; `table`: the alias they are qualified with. */
  select(provider: Provider, table?: string): string;
  /** A row selected with `select`, as an object of the model. */
  of(row: readonly unknown[]): T;
}

export function typedRows<T>(columns: { readonly [K in keyof T]: ColumnKind }): TypedRows<T> {
  const names = Object.keys(columns) as (keyof T & string)[];
  const kinds = names.map((c) => columns[c]);
  return {
    select: (provider, table) => names.map((c) => (table ? `${table}."${c}"` : `"${c}"`)).map((col, i) => (kinds[i] === "time" ? timeColumn(provider, col) : col)).join(", "),
    of(row) {
      const out: Record<string, unknown> = {};
      names.forEach((c, i) => {
        const v = row[i];
        const kind = kinds[i];
        out[c] = v === null || v === undefined ? null : kind === "time" ? new Date(v as string | number) : kind === "int" || kind === "float" ? Number(v) : kind === "bool" ? v === true || v === 1 : v;
      });
      return out as T;
    },
  };
}
