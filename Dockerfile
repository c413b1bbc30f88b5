# Multi-stage build: dependencies are cooked in their own layer (cargo-chef) so
# a source change does not rebuild them; the runtime image is Debian slim with
# a non-root user and nothing but the binary and CA certificates.
FROM rust:1.95-slim-bookworm AS chef
# Pinned, so that a rebuild of the same source cooks with the same tool.
ARG CARGO_CHEF_VERSION=0.1.78
RUN cargo install cargo-chef --locked --version "${CARGO_CHEF_VERSION}"
WORKDIR /app

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS builder
COPY --from=planner /app/recipe.json recipe.json
RUN cargo chef cook --release --recipe-path recipe.json
COPY . .
RUN cargo build --release --locked --bin protocheck

FROM debian:bookworm-slim AS runtime
# A plain user with a fixed id (not a system account: ids of 1000 and above
# are users' ranges, so useradd has nothing to warn of), owning the data
# directory before it becomes a volume, so a named volume starts owned by it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 protocheck \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/protocheck \
      --shell /usr/sbin/nologin protocheck \
 && mkdir -p /var/lib/protocheck \
 && chown protocheck:protocheck /var/lib/protocheck
COPY --from=builder /app/target/release/protocheck /usr/local/bin/protocheck
USER protocheck
WORKDIR /var/lib/protocheck
# The SQLite default keeps every run and the signing key file here: a volume,
# so that removing the container loses neither.
VOLUME /var/lib/protocheck
# Listening on every address makes the service refuse private targets by default.
ENV PROTOCHECK_BIND=0.0.0.0:8080 \
    DATABASE_URL=sqlite:///var/lib/protocheck/protocheck.db
EXPOSE 8080
# For `serve`, the default command. `worker` and `migrate` listen on no port:
# run them with `--no-healthcheck` (docker-compose.yml disables it for them).
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["protocheck"]
CMD ["serve"]
