#!/usr/bin/env bash
# Build the gateway (gateway-builder.yaml) with the OpenTelemetry Collector Builder from the
# Go module proxy: needs Go (Debian's golang-go) and the proxy within reach.
# Output: collector/build/otelcol-rampart-gateway/otelcol-rampart-gateway
set -euo pipefail
cd "$(dirname "$0")"
OCB_VERSION="${OCB_VERSION:-v0.129.0}"   # the builder matching the manifest's versions

if ! command -v go >/dev/null 2>&1; then
    echo "build-gateway.sh: Go is not installed (apt-get install golang-go)" >&2
    exit 2
fi
if ! go list -m "go.opentelemetry.io/collector/cmd/builder@${OCB_VERSION}" >/dev/null 2>&1; then
    echo "build-gateway.sh: cannot reach the Go module proxy ($(go env GOPROXY)) for" \
        "go.opentelemetry.io/collector/cmd/builder@${OCB_VERSION}" >&2
    exit 2
fi
GOBIN="$PWD/build/bin" go install "go.opentelemetry.io/collector/cmd/builder@${OCB_VERSION}"
build/bin/builder --config gateway-builder.yaml
echo "built collector/build/otelcol-rampart-gateway/otelcol-rampart-gateway"
