"""svc's image built and run with podman, for tests/test_container.py (`make test-container`).

No image registry is needed: the base is Debian made by mmdebstrap from Debian's packages and
imported into podman's storage, where it stays between runs under a tag naming its recipe;
svc's image is built from the Dockerfile with `--build-arg BASE=` that base.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "CONTAINERS_CONF": str(ROOT / "harness" / "containers.conf")}
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# A small Debian: merged /usr without usrmerge (which would bring perl), no recommended
# packages, no manuals, translations or documentation but the licences.
DEBIAN_RECIPE = [
    "--variant=minbase",
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    "--aptopt=Apt::Install-Recommends false",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
]
IMAGE = "localhost/svc:test"
# The host's CA bundle, for a build behind a proxy that re-signs TLS (this machine's case).
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def podman(*arguments: str, check: bool = True, timeout: float = 600) -> str | None:
    """podman's output; when it fails, an AssertionError, or None with check=False."""
    done = subprocess.run(["podman", *arguments], env=ENV, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    if done.returncode != 0:
        if not check:
            return None
        raise AssertionError(f"podman {' '.join(arguments)}: {done.returncode}\n{done.stderr}")
    return done.stdout.strip()


def base_image() -> str:
    """The Debian base with Python that svc's image is built on."""
    return debian_image("svc-test-base", ["python3", "python3-venv", "ca-certificates"])


def debian_image(name: str, packages: list[str]) -> str:
    """A Debian of DEBIAN_RECIPE with `packages`, made once for its recipe and kept in podman's
    storage under a tag naming it."""
    recipe = [*DEBIAN_RECIPE, f"--include={','.join(packages)}", SUITE]
    digest = hashlib.sha256(" ".join(recipe).encode()).hexdigest()[:12]
    tag = f"localhost/{name}:{SUITE}-{digest}"
    if podman("image", "exists", tag, check=False) is not None:
        return tag
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "base.tar"
        subprocess.run(["mmdebstrap", "--quiet", *recipe, str(archive), MIRROR],
                       check=True, timeout=900)  # fmt: skip
        podman("import", "--quiet", str(archive), tag)
    return tag


# PostgreSQL from Debian, started as the official image (compose.yaml's) starts it, for running
# compose.yaml where no image registry can be reached (tests/test_container.py).
POSTGRES_VERSION = 15
POSTGRES_CONTAINERFILE = f"""\
FROM {{base}}
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
RUN mkdir -p /var/lib/postgresql/data && chown postgres:postgres /var/lib/postgresql/data
ENV PATH=/usr/lib/postgresql/{POSTGRES_VERSION}/bin:/usr/bin PGDATA=/var/lib/postgresql/data \\
    PGHOST=/tmp
USER postgres
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
"""


def postgresql_image() -> str:
    """That PostgreSQL's image, on a Debian base of its own."""
    base = debian_image("svc-test-postgres-base", [f"postgresql-{POSTGRES_VERSION}"])
    tag = base.replace("-base:", ":")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "Containerfile").write_text(POSTGRES_CONTAINERFILE.format(base=base))
        shutil.copy(ROOT / "harness" / "postgres-entrypoint.sh", folder)
        podman("build", "--quiet", "--tag", tag, folder)
    return tag


def build_image(base: str) -> str:
    """svc's image from the Dockerfile on `base` (podman reuses its cached layers)."""
    ca = []
    if Path(CA_BUNDLE).is_file():
        ca = ["--volume", f"{CA_BUNDLE}:{CA_BUNDLE}:ro",
              "--build-arg", f"PIP_CERT={CA_BUNDLE}",
              "--build-arg", f"NODE_EXTRA_CA_CERTS={CA_BUNDLE}"]  # fmt: skip
    podman("build", "--quiet", "--build-arg", f"BASE={base}", *ca, "--tag", IMAGE, str(ROOT),
           timeout=1800)  # fmt: skip
    return IMAGE
