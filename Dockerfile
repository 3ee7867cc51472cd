# labelgate: one image for every service (gateway, consensus-worker, webhook-worker, manifest-worker)
# and for the migration step. Services run from TypeScript source through tsx; there is no build step.
#
#   docker build -t labelgate:latest .
#   docker run --rm -e DATABASE_URL=... labelgate:latest pnpm db:migrate
#   docker run --rm -p 3000:3000 -e DATABASE_URL=... -e REDIS_URL=... labelgate:latest
#   docker run --rm -e DATABASE_URL=... -e REDIS_URL=... labelgate:latest pnpm --filter @labelgate/consensus-worker start
FROM node:20-bookworm-slim

# pnpm 12, installed with npm (corepack is not used: its signature checks fail in some build environments).
RUN npm i -g pnpm@12

WORKDIR /app

# The whole repository (minus what .dockerignore drops: node_modules, .data, .git, coverage, ...).
COPY . .

# devDependencies are needed at runtime (tsx runs the services, the prisma CLI runs migrations),
# so NODE_ENV must not be "production" here. Build scripts are gated by allowBuilds in pnpm-workspace.yaml.
RUN pnpm install --frozen-lockfile

# Generates the Prisma client into packages/db/src/generated. No database is contacted, but DATABASE_URL
# must be set: without it Prisma cannot read the schema's datasource, ignores `engineType = "client"`
# and tries to download a native query engine from outside the npm registry. The value is a placeholder
# for this step only; it does not end up in the image's environment.
RUN DATABASE_URL=postgresql://build:build@localhost:5432/build pnpm db:generate

# Run as the image's unprivileged "node" user (uid 1000). Everything under /app stays root-owned and
# read-only to the services; tsx caches compiled files under /tmp.
USER node

ENV PORT=3000
EXPOSE 3000

# Default: the HTTP gateway. Override the command for the workers or the migration.
CMD ["pnpm", "--filter", "@labelgate/gateway", "start"]
