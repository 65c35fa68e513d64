# syntax=docker/dockerfile:1
# The metal-l2 image for people who build with Docker or BuildKit. CI does not use this file: the
# image CI tests is built without a container engine by hack/build-image.js (npm run image), from
# Debian packages. Both give the same layout: the pinned Node.js 24 LTS (the official build the npm
# registry serves as node-linux-<arch>, version and integrity in hack/nodejs/package-lock.json,
# installed by hack/install-node.js) at /usr/bin/node on Debian 13's glibc and libstdc++, the
# controllers under /app, user 65532, working directory /app, and Debian's keepalived, which Ignition
# (Flatcar) control planes run from this image (--announcer-image; this file's image keeps the rest of
# trixie-slim, the CI-built one only what keepalived and its scripts need). Debian 13's own nodejs is
# 20, past its end of life; node:24's binary is the same official build, but not the pinned one.
#
#   docker build -t metal-l2:dev .
#   docker run --rm metal-l2:dev /app/packages/ipam-controller/dist/main.js --help
#   docker run --rm metal-l2:dev /app/packages/network-controller/dist/main.js --help

FROM node:24-trixie-slim AS build
WORKDIR /src
# The pinned node, checked against the lockfile's integrity.
COPY hack/install-node.js ./hack/
COPY hack/nodejs ./hack/nodejs
RUN mkdir -p /out/node \
 && METAL_L2_CACHE=/tmp/metal-l2-cache node hack/install-node.js > /tmp/node-bin \
 && cp "$(cat /tmp/node-bin)/node" "$(cat /tmp/node-bin)/../LICENSE" /out/node/
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY packages ./packages
RUN npm ci --no-audit --no-fund --ignore-scripts
RUN npx tsc -b
# The production install of the two controllers' workspaces, and only their built JavaScript.
RUN rm -rf node_modules \
 && npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
      --workspace=@metal-l2/ipam-controller --workspace=@metal-l2/network-controller \
 && mkdir -p /out/app/packages \
 && cp package.json /out/app/ \
 && cp -a node_modules /out/app/ \
 && rm -f /out/app/node_modules/.package-lock.json \
 && for p in $(ls node_modules/@metal-l2); do \
      mkdir -p "/out/app/packages/$p" \
      && cp -a "packages/$p/package.json" "packages/$p/dist" "/out/app/packages/$p/" \
      && if [ -d "packages/$p/bin" ]; then cp -a "packages/$p/bin" "/out/app/packages/$p/"; fi; \
    done \
 && find /out/app \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '.tsbuildinfo' \) -delete \
 && rm -rf /out/app/node_modules/@types \
 && chmod -R go-w /out/app

FROM debian:trixie-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libstdc++6 ca-certificates keepalived \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /usr/share/doc/* /usr/share/man/* \
 && echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'nonroot:x:65532:' >> /etc/group \
 && install -d -o 65532 -g 65532 -m 0700 /home/nonroot
COPY --from=build --chown=0:0 --chmod=0755 /out/node/node /usr/bin/node
COPY --from=build --chown=0:0 /out/node/LICENSE /usr/share/doc/nodejs/LICENSE
COPY --from=build --chown=0:0 /out/app /app
ENV NODE_ENV=production
# Trust /etc/ssl/certs besides node's built-in CA list, as Debian's node did.
ENV NODE_USE_SYSTEM_CA=1
WORKDIR /app
USER 65532:65532
ENTRYPOINT ["/usr/bin/node"]
CMD ["/app/packages/ipam-controller/dist/main.js"]
