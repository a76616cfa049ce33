# wheelhouse in a container: built on debian:12 with the project's own dependency script, run on
# debian:12-slim with only the shared libraries the binary loads.
#   docker build -t wheelhouse .        (podman: podman build --format docker -t wheelhouse .)
#   docker run -d -p 8080:8080 -v wheelhouse-data:/var/lib/wheelhouse wheelhouse
# Configuration comes from WHEELHOUSE_* variables (`wheelhouse serve --help` lists them).

FROM debian:12 AS build
COPY deploy/install-deps.sh /tmp/install-deps.sh
RUN bash /tmp/install-deps.sh build && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Everything but what .dockerignore leaves out (build trees, tests, benchmarks, git).
COPY . .
# The release preset is the configuration the tests run (-O2; GCC 12 at -O3 warns falsely);
# ccache in a cache mount makes rebuilds of the image quick. A build on a host that has just
# compiled the same tree can lend it its cache instead (the container test does):
#   podman build --build-arg CCACHE_DIR=/host-ccache -v "$HOME/.cache/ccache:/host-ccache" ...
ARG CCACHE_DIR=/root/.cache/ccache
RUN --mount=type=cache,target=/root/.cache/ccache \
    export CCACHE_DIR="$CCACHE_DIR" CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=1 \
 && cmake --preset release -DWHEELHOUSE_TESTS=OFF -DWHEELHOUSE_BENCH=OFF \
 && cmake --build --preset release --target wheelhouse \
 && strip build/release/server/wheelhouse

FROM debian:12-slim
COPY deploy/install-deps.sh /tmp/install-deps.sh
RUN bash /tmp/install-deps.sh runtime && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh
# A fixed uid, so a volume prepared on the host (chown 10001) fits any rebuild of the image.
RUN groupadd --system --gid 10001 wheelhouse \
 && useradd --system --uid 10001 --gid wheelhouse --home-dir /var/lib/wheelhouse --no-create-home \
            --shell /usr/sbin/nologin wheelhouse \
 && mkdir -p /var/lib/wheelhouse && chown wheelhouse:wheelhouse /var/lib/wheelhouse && chmod 0750 /var/lib/wheelhouse
COPY --from=build /src/build/release/server/wheelhouse /usr/local/bin/wheelhouse

ENV WHEELHOUSE_DATA=/var/lib/wheelhouse \
    WHEELHOUSE_LISTEN=0.0.0.0:8080 \
    WHEELHOUSE_ACCESS_LOG=-
VOLUME ["/var/lib/wheelhouse"]
EXPOSE 8080
USER wheelhouse:wheelhouse
# Asks the port the server was told to listen on.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${WHEELHOUSE_LISTEN##*:}/healthz" || exit 1
# docker stop sends SIGTERM: the server drains (WHEELHOUSE_DRAIN_TIMEOUT, 10 s) and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/wheelhouse"]
CMD ["serve"]
