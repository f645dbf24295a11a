# One image for every service; pick one with the command, e.g. `node dist/gateway.js`.
# The default command is the all-in-one with its embedded Postgres, whose data (and the master key) live in
# DATA_DIR, a volume: docker run -p 3000:3000 -v cas-data:/data conversation-analytics
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs libs
COPY services services
# The TypeScript SDK is a workspace too (its dev dependency, openapi-typescript, is in the lock file).
COPY sdks/typescript/package.json sdks/typescript/
# onnxruntime-node's install script would fetch GPU libraries; the CPU ones the service uses are in the package.
ENV ONNXRUNTIME_NODE_INSTALL=skip
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/migrations migrations
COPY --from=build /app/package.json package.json
# The application directory stays root's and read-only to the service; only DATA_DIR is its to write.
# A new named volume takes this directory's owner, so the service can write there too.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "dist/all-in-one.js"]
