# labelgate: one image for every service (gateway, consensus-worker, webhook-worker, manifest-worker),
# the migration step and the local S3-compatible store of docker-compose.yml. Services run from
# TypeScript source through tsx (`node --import tsx`, no build step).
#
#   docker build -t labelgate:latest .
#   docker run --rm -e DATABASE_URL=... labelgate:latest node --import tsx scripts/migrate.ts
#   docker run --rm -p 3000:3000 -e DATABASE_URL=... -e REDIS_URL=... -e ENCRYPTION_KEY=... labelgate:latest
#   docker run --rm -e DATABASE_URL=... -e REDIS_URL=... labelgate:latest node --import tsx services/consensus-worker/src/main.ts
#
# Signals: tini is PID 1 (ENTRYPOINT) and forwards SIGTERM to node, which is the only other process
# (the services are started with `node --import tsx ...`, not through pnpm or the tsx CLI, so there is no
# intermediate process and no extra Node.js runtime per container). The services shut down gracefully on
# SIGTERM within SHUTDOWN_TIMEOUT_MS (default 10 s); give them more than that (compose stop_grace_period,
# Kubernetes terminationGracePeriodSeconds: 30 s).

FROM node:20-bookworm-slim AS base
# tini: a minimal init that forwards signals and reaps zombies. pnpm 12 is installed with npm (corepack
# is not used: its signature checks fail in some build environments).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && npm i -g pnpm@12 \
  && npm cache clean --force
# Prisma: no telemetry or update checks (the image never needs the network at run time).
ENV CHECKPOINT_DISABLE=1 \
  PRISMA_HIDE_UPDATE_MESSAGE=1

# --- build: dependencies and the generated Prisma client ----------------------------------------------
FROM base AS build
WORKDIR /app
# `pnpm fetch` needs only the lockfile, so this layer (the package downloads) is cached until it changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
# The whole repository (minus what .dockerignore drops: node_modules, .data, .git, generated, ...).
COPY . .
# devDependencies are needed at run time (tsx runs the services, the prisma CLI runs migrations, s3rver
# is the compose stack's S3 store), so NODE_ENV must not be "production" here. Build scripts are gated
# by allowBuilds in pnpm-workspace.yaml. The root postinstall runs `prisma generate` and builds the web apps (Vite,
# packages/web/dist, served by the gateway at /label/ and /console/), offline:
# prisma.config.ts uses the bundled WASM engine (engine "js", engineType "client") and a placeholder
# DATABASE_URL; nothing is downloaded and no database is contacted.
RUN pnpm install --offline --frozen-lockfile

# --- runtime --------------------------------------------------------------------------------------
FROM base
WORKDIR /app
# Owned by root and read-only to the services; the package store of the build stage is left behind.
COPY --from=build /app /app
# Data directory of the compose stack's S3 store (a named volume mounted there inherits this owner).
RUN mkdir -p /data/s3 && chown node:node /data/s3

# The image's unprivileged "node" user (uid/gid 1000). tsx caches compiled files under /tmp.
USER node

ENV PORT=3000
# 3000: gateway API (PORT). 9100-9103: ops servers (METRICS_PORT: /metrics, /healthz, /readyz) of the
# gateway, consensus-worker, webhook-worker and manifest-worker.
EXPOSE 3000 9100 9101 9102 9103

ENTRYPOINT ["/usr/bin/tini", "--"]
# Default: the HTTP gateway. Override the command (compose `command`, Kubernetes `args`) for the
# workers or the migration.
CMD ["node", "--import", "tsx", "services/gateway/src/main.ts"]
