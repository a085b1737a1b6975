# syntax=docker/dockerfile:1
# Edgewise's image: `docker build -t edgewise .` on a clone, then
#   docker run -p 8000:8000 edgewise                                  # embedded DynamoDB, demo data
#   docker run -p 8000:8000 -e EDGEWISE_DYNAMODB=aws -e AWS_REGION=eu-west-1 edgewise --production
# Arguments after the image name are `edgewise serve` flags; EDGEWISE_* variables work too.

# 1. GraphiQL's npm packages, exactly as playground/package-lock.json pins them.
FROM node:20-bookworm-slim AS playground
WORKDIR /src/playground
COPY playground/package.json playground/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error

# 2. The wheel. Its build step finds node_modules at the pinned versions and copies GraphiQL's
#    files into the wheel without running npm again.
FROM python:3.11-slim-bookworm AS wheel
RUN pip install --no-cache-dir "build>=1.2"
WORKDIR /src
COPY . .
COPY --from=playground /src/playground/node_modules playground/node_modules
RUN python -m build --wheel --outdir /dist

# 3. The image: the wheel (with the embedded DynamoDB) in a virtualenv, run by a non-root user;
#    the shipped models compiled by `edgewise build` (EDGEWISE_COMPILED: a start reads them
#    instead of compiling the model file; another model needs `-e EDGEWISE_COMPILED=`).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/edgewise/bin:$PATH \
    EDGEWISE_HOST=0.0.0.0 \
    EDGEWISE_PORT=8000 \
    EDGEWISE_COMPILED=/opt/edgewise/compiled
COPY --from=wheel /dist/ /tmp/dist/
RUN python -m venv /opt/edgewise \
    && /opt/edgewise/bin/pip install --no-cache-dir "$(ls /tmp/dist/edgewise-*.whl)[embedded,server]" \
    && rm -rf /tmp/dist \
    && /opt/edgewise/bin/edgewise build --model demo --output /opt/edgewise/compiled \
    && /opt/edgewise/bin/edgewise build --model orders --output /opt/edgewise/compiled \
    && /opt/edgewise/bin/edgewise build --model order-entry --output /opt/edgewise/compiled \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /home/edgewise \
       --shell /usr/sbin/nologin edgewise
USER 10001:10001
WORKDIR /home/edgewise
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('EDGEWISE_PORT', '8000'), timeout=4)"]
ENTRYPOINT ["edgewise", "serve"]
