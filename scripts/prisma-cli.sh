#!/usr/bin/env bash
# Runs the Prisma CLI on a machine that cannot download Prisma's native schema engine, through the
# offline stand-in in ../shared/tools/prisma-schema-engine (see CONTRIBUTING.md, "The data model and migrations").
# The stand-in resolves its packages from where it sits, so it is copied under node_modules first.
# Usage: scripts/prisma-cli.sh sqlite|postgresql <prisma args...>
set -euo pipefail
cd "$(dirname "$0")/.."
provider="$1"; shift
src="${PRISMA_SHIM_SOURCE:-../shared/tools/prisma-schema-engine/schema-engine.mjs}"
if [ -z "${PRISMA_SCHEMA_ENGINE_BINARY:-}" ]; then
  [ -f "$src" ] || { echo "no schema engine: set PRISMA_SCHEMA_ENGINE_BINARY or provide $src" >&2; exit 1; }
  mkdir -p node_modules/.cairn-prisma-shim
  cp "$src" node_modules/.cairn-prisma-shim/schema-engine.mjs
  export PRISMA_SCHEMA_ENGINE_BINARY="$PWD/node_modules/.cairn-prisma-shim/schema-engine.mjs"
fi
CAIRN_PRISMA_PROVIDER="$provider" exec npx prisma "$@"
