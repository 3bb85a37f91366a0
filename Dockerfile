# syntax=docker/dockerfile:1
#
# The checker as a container image: a static binary on a distroless base
# (CA certificates and time zones, no shell, no package manager), run as a
# non-root user. The binary probes its own /livez, so the health check
# needs no curl; liveness, not readiness, since Docker and ECS replace an
# unhealthy container, and an AWS outage must not restart the checker.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse --short HEAD) -t queue-checker .
#   docker run -v $PWD/config.yaml:/etc/queue-checker/config.yaml:ro -p 9102:9102 queue-checker
#
# The config must listen on 0.0.0.0:9102 (not the loopback default) for
# /metrics to be reachable from outside the container.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" \
      -o /out/checker ./cmd/checker

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/checker /checker
USER nonroot:nonroot
EXPOSE 9102
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/checker", "health", "--url", "http://127.0.0.1:9102/livez", "--timeout", "3s"]
ENTRYPOINT ["/checker"]
CMD ["run", "--config", "/etc/queue-checker/config.yaml"]
