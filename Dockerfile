# Multi-stage build: dependencies are cooked in their own layer (cargo-chef) so
# a source change does not rebuild them; the runtime image is Debian slim with
# a non-root user and nothing but the binary and CA certificates.
FROM rust:1.95-slim-bookworm AS chef
RUN cargo install cargo-chef --locked
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
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/protocheck --create-home protocheck
COPY --from=builder /app/target/release/protocheck /usr/local/bin/protocheck
USER protocheck
WORKDIR /var/lib/protocheck
# Listening on every address makes the service refuse private targets by default.
ENV PROTOCHECK_BIND=0.0.0.0:8080 \
    DATABASE_URL=sqlite:///var/lib/protocheck/protocheck.db
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["protocheck"]
CMD ["serve"]
