import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "src/db/generated/", "data/", "scratch/", "bench/results/", "dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  // CommonJS configuration files (dependency-cruiser reads .dependency-cruiser.cjs with require).
  { files: ["**/*.cjs"], languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly" } } },
);
