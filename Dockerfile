# ringkv node image. Build: docker build -t ringkv .   Run: docs/containers.md
#
# Three stages: `build` compiles src/ to dist/ with the dev dependencies; `deps` installs
# the production dependencies only; the runtime stage copies dist/, proto/ and web/ (read at
# run time), package.json and the production node_modules onto node:20-bookworm-slim.
# classic-level (LevelDB) ships prebuilt binaries for linux glibc x64 and arm64
# (node_modules/classic-level/prebuilds), and bookworm is glibc: no compiler is needed.
#
# BASE: node:20-bookworm-slim from Docker Hub. Where no registry can be reached,
# scripts/base-image.sh builds a stand-in from Debian packages and prints its name:
#   docker build --network host --build-arg BASE=$(scripts/base-image.sh) -t ringkv .
# (docs/containers.md#building-without-a-registry).
ARG BASE=node:20-bookworm-slim

FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: tsc needs no native module, and dev dependencies' optional native
# builds (ssh2's cpu-features, for testcontainers) would want a compiler this image lacks.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# classic-level's install script (node-gyp-build) finds its prebuilt binary and builds nothing.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${BASE}
LABEL org.opencontainers.image.title="ringkv" \
      org.opencontainers.image.description="A Dynamo-style replicated key-value store" \
      org.opencontainers.image.licenses="Apache-2.0"
# A fixed numeric uid/gid, so that Kubernetes' runAsNonRoot can check it and fsGroup can match it.
RUN groupadd --system --gid 10001 ringkv \
 && useradd --system --uid 10001 --gid ringkv --home-dir /var/lib/ringkv --shell /usr/sbin/nologin ringkv \
 && mkdir -p /var/lib/ringkv \
 && chown ringkv:ringkv /var/lib/ringkv
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY proto ./proto
COPY web ./web
ENV NODE_ENV=production \
    RINGKV_LISTEN=0.0.0.0:7001 \
    RINGKV_HTTP=0.0.0.0:8080 \
    RINGKV_DATA_DIR=/var/lib/ringkv
# Owned by ringkv before it is declared, so a new named volume starts with that owner.
VOLUME /var/lib/ringkv
# 7001: gRPC (clients, peers, admin, grpc.health.v1); 8080: /metrics and the status page.
EXPOSE 7001 8080
USER 10001:10001
# SERVING only once the node is a normal member with its store open: a joining node
# streams its ranges first, hence the long start period.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "/app/dist/cli/main.js", "health", "--node", "127.0.0.1:7001", "--deadline-ms", "3000"]
# SIGTERM stops the node cleanly (health NOT_SERVING, in-flight calls finish, LevelDB closes).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["node"]
