# One image for every service; pick one with the command, e.g. `node dist/gateway.js`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs libs
COPY services services
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/migrations migrations
COPY --from=build /app/package.json package.json
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "dist/all-in-one.js"]
