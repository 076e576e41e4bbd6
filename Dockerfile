# cairn: build with the full toolchain, run the compiled build on production dependencies only.
#   docker build -t cairn .
#   docker run -d --env-file .env -v cairn-data:/app/data -p 3000:3000 -p 127.0.0.1:9464:9464 cairn
# See docs/container.md.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: npm ci, the native addon, tsc -------------------------------------------------------
FROM ${NODE_IMAGE} AS build
# better-sqlite3 is a native addon: node-gyp needs python3, make and a C++ compiler.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are off (Prisma's CLI is a dev dependency and its clients are committed in
# src/db/generated: nothing here needs its engines); the one addon that needs its script is then
# built from source against the Node headers of this image (node-gyp downloads nothing), so the
# build needs only the npm registry.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm_config_build_from_source=true \
    npm_config_nodedir="$(node -p 'require("node:path").resolve(process.execPath, "../..")')" \
    npm rebuild better-sqlite3 \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"
COPY tsconfig.json tsconfig.build.json ./
# tsconfig.build.json compiles bench/ too, which imports test/fakes: only dist/src reaches the image.
COPY src ./src
COPY bench ./bench
COPY test ./test
# Then production dependencies only, without the addon's C sources and object files.
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
           node_modules/better-sqlite3/build/Release/obj node_modules/better-sqlite3/build/Release/obj.target \
           node_modules/better-sqlite3/build/Release/.deps node_modules/better-sqlite3/build/Release/test_extension.node

# ---- runtime: dist/, production node_modules, migrations, bundled skills ------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    CAIRN_HEALTH_PORT=9464
WORKDIR /app
RUN groupadd --gid 10001 cairn \
 && useradd --uid 10001 --gid cairn --home-dir /app --no-create-home --shell /usr/sbin/nologin cairn \
 && mkdir -p /app/data \
 && chown cairn:cairn /app/data
# package.json marks the code as ESM and is how cairn finds its own folder (src/ground/paths.ts):
# migrations are read from /app/prisma, bundled skills from /app/skills.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY prisma ./prisma
COPY skills ./skills
# The SQLite file (default DATABASE_URL file:./data/cairn.db) and the inbound journal (journal/
# beside the SQLite file, else ./data/journal) both live here: keep it on a volume.
VOLUME ["/app/data"]
USER cairn
# 3000: Slack's HTTP mode (/slack/events, plus /healthz, /readyz, /metrics).
# 9464: /healthz, /readyz and /metrics in every mode (CAIRN_HEALTH_PORT).
EXPOSE 3000 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.CAIRN_HEALTH_PORT || process.env.PORT) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1: SIGTERM from `docker stop` reaches cairn, which finishes the answers in flight
# (CAIRN_STOP_TIMEOUT_MS, 25 s by default: give `docker stop` a longer -t) and exits 0.
CMD ["node", "dist/src/main.js"]
