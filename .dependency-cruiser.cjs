/**
 * The house's rules (docs/architecture.md): arrows point down, only stores reach the database,
 * platforms know their SDK and the ground. `npm run check` runs this over src/; a broken rule
 * fails CI. scripts/check-folders.mjs adds what dependency-cruiser cannot say per module: no
 * cycle between folders, type imports included.
 */
// Store modules: `store.ts`, `<concept>-store.ts`, or anything in a `store/` or `stores/` folder.
const STORE = "(^|/)(store|[a-z-]+-store)\\.ts$|/stores?/";
// The top: wiring, settings and lifecycle (src/app), and the entry points that start it or check
// its settings and services (main, cli, the doctor).
const TOP = "^src/(app/|doctor/|main\\.ts$|cli\\.ts$)";
// The doctor checks the database with the drivers themselves, before cairn opens it.
const OPENS_DATABASE = "^src/doctor/";

module.exports = {
  forbidden: [
    {
      name: "no-runtime-cycle",
      comment: "A runtime import cycle makes load order matter: split the module or pass a function in.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "ground-imports-nothing-above",
      comment: "src/ground is the vocabulary every floor shares: it may import only itself and packages.",
      severity: "error",
      from: { path: "^src/ground/" },
      to: { path: "^src/", pathNot: "^src/ground/" },
    },
    {
      name: "nothing-imports-the-top",
      comment: "The top (src/app, main, cli) wires the floors below; nothing below may import it.",
      severity: "error",
      from: { path: "^src/", pathNot: TOP },
      to: { path: TOP },
    },
    {
      name: "only-stores-reach-the-database",
      comment: "Only store modules, src/db and the top import src/db (the Prisma client, direct SQL, scope making). Everything else asks a store.",
      severity: "error",
      from: { path: "^src/", pathNot: [STORE, "^src/db/", TOP] },
      to: { path: "^src/db/" },
    },
    {
      name: "only-db-imports-prisma",
      comment: "The Prisma packages and database drivers are src/db's; stores use them through src/db (the doctor checks a database with the drivers before cairn opens it).",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/db/", OPENS_DATABASE] },
      to: { path: "node_modules/(@prisma/|better-sqlite3/|pg/|pg-pool/)" },
    },
    {
      name: "platforms-know-no-database",
      comment: "A platform adapter knows its SDK and the ground; it reaches cairn only through the contract (CorePort).",
      severity: "error",
      from: { path: "^src/platforms/" },
      to: { path: ["^src/db/", STORE] },
    },
    {
      name: "platforms-stay-apart",
      comment: "One platform never imports another.",
      severity: "error",
      from: { path: "^src/platforms/([^/]+)/" },
      to: { path: "^src/platforms/", pathNot: "^src/platforms/$1/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/db/generated/" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"], extensions: [".ts", ".js", ".mjs", ".cjs", ".json"] },
  },
};
