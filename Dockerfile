# svc's image (docs/deployment.md, "With Docker or Podman"): `docker compose up`, or
#   docker build -t svc . && docker run -p 8000:8000 -v svc-data:/data svc
# BASE: any Debian image with Python 3.11 or newer and its venv module; the official slim one by
# default. Everything svc keeps (SQLite, files, its secret key) is in the volume /data.
ARG BASE=docker.io/library/python:3.11-slim-bookworm
# REPRO=on: the variant that runs reports' steps on a staging origin (docs/repro-kit.md): Node.js,
# Playwright's test runner and Debian's chromium-headless-shell in the image (docs/deployment.md).
# Playwright needs Node.js 20: a Debian 13 base (BASE=docker.io/library/python:3.13-slim-trixie).
ARG REPRO=off

# --- build: Python packages from pyproject.toml, rrweb from package-lock.json, the catalogs ----
FROM ${BASE} AS build
ARG REPRO
# Behind a proxy that re-signs TLS, its CA for pip and npm (empty: the usual public ones).
ARG PIP_CERT
ARG NODE_EXTRA_CA_CERTS
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The dependencies first, in layers of their own: a change of code rebuilds from COPY . on.
COPY pyproject.toml README.md ./
RUN python3 -m venv .venv \
    && .venv/bin/python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" > /tmp/requirements.txt \
    && .venv/bin/pip install --no-cache-dir -r /tmp/requirements.txt
COPY package.json package-lock.json ./
# Playwright's runner only where a browser will run it (19 MB the default image need not carry).
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error && rm -rf /root/.npm \
    && if [ "$REPRO" != on ]; then \
         rm -rf node_modules/playwright node_modules/playwright-core node_modules/@playwright \
           node_modules/.bin/playwright; \
       fi
COPY . .
RUN .venv/bin/pip install --no-cache-dir --no-deps -e . \
    && for domain in messages widget; do \
         .venv/bin/pybabel -q compile -D $domain -d svc/translations || exit 1; \
       done \
    && .venv/bin/python -m compileall -q svc migrations
# What the image need not carry (docs/performance.md, "The image"): pip and setuptools, and
# Babel's data for the 700-odd languages svc does not speak (LANGUAGES in svc/i18n.py; 33 MB).
RUN .venv/bin/python -c "import babel, pathlib; from svc.i18n import LANGUAGES; \
keep = {language.split('-')[0] for language in LANGUAGES} | {'root'}; \
data = pathlib.Path(babel.__file__).parent / 'locale-data'; \
[path.unlink() for path in data.glob('*.dat') if path.stem.split('_')[0] not in keep]" \
    && .venv/bin/pip uninstall -q -y pip setuptools

# --- run: the base, the built folder, a user of its own -----------------------------------------
FROM ${BASE}
ARG REPRO
RUN if [ "$REPRO" = on ]; then \
      apt-get update \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
           nodejs chromium-headless-shell fonts-liberation \
      && rm -rf /var/lib/apt/lists/* \
      && { node -e 'process.exit(+process.versions.node.split(".")[0] < 20)' \
           || { echo "REPRO=on needs Node.js 20 or newer: build on a Debian 13 base" >&2; exit 1; }; }; \
    fi
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home svc \
    && mkdir /data && chown svc:svc /data
COPY --from=build /app /app
WORKDIR /app
ENV PATH=/app/.venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    SVC_INSTANCE_PATH=/data SVC_BIND=0.0.0.0:8000
USER svc
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-m", "svc.serve", "--ready"]
# Migrations, then gunicorn and the scheduler (SVC_ROLE=web or scheduler: that one alone).
ENTRYPOINT ["python", "-m", "svc.serve"]
