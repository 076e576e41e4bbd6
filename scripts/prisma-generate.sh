#!/usr/bin/env bash
# Regenerates the committed Prisma clients (src/db/generated/{sqlite,postgresql}) from the schemas.
# The clients are committed so that installing and running cairn never needs Prisma's CLI or engine.
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/prisma-schemas.mjs
scripts/prisma-cli.sh sqlite generate
scripts/prisma-cli.sh postgresql generate
