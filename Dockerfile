# syntax=docker/dockerfile:1
#
# Zoo's container image: a static binary on distroless, running as a
# non-root user. Build from the repository root:
#
#   docker build -t zoo --build-arg VERSION=0.1.0 .
#
# Configure it with a mounted /conf/zoo.cfg or with the official zookeeper
# image's variables (ZOO_MY_ID, ZOO_SERVERS, ZOO_TICK_TIME, ...): see
# docs/operations.md ("Containers").

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
# CGO_ENABLED=0: a static binary, so the runtime image needs no libc.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/usr/local/bin/zoo ./cmd/zoo \
    && mkdir -p /out/conf /out/data /out/datalog

FROM gcr.io/distroless/static-debian12:nonroot
# 65532 is distroless's "nonroot". The directories are created owned by it,
# so named volumes mounted there start writable.
COPY --from=build /out/usr/local/bin/zoo /usr/local/bin/zoo
COPY --from=build --chown=65532:65532 /out/conf /conf
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/datalog /datalog
USER 65532:65532
ENV ZOO_CONF_DIR=/conf \
    ZOO_DATA_DIR=/data \
    ZOO_DATA_LOG_DIR=/datalog
VOLUME ["/data", "/datalog"]
# client, quorum (raft), election (unused by Zoo, kept for Apache's
# server.N syntax), AdminServer, Prometheus metrics
EXPOSE 2181 2888 3888 8080 7000
# srvr answers with a Mode only when the server is serving; it is the one
# four-letter word Apache's default whitelist allows.
HEALTHCHECK --interval=10s --timeout=6s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/zoo", "healthcheck", "127.0.0.1:2181"]
ENTRYPOINT ["/usr/local/bin/zoo"]
CMD ["docker-entrypoint"]
