# An agents-kit worker. Build: docker build -t agents-kit . ; run: see docker-compose.yml.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY bin ./bin
# The launcher is PID 1: it forwards SIGTERM to the worker, which drains in-flight tasks and exits 0.
CMD ["node", "bin/agents-kit.mjs", "worker"]
