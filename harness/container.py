"""svc's image built and run with podman, for tests/test_container.py (`make test-container`).

No image registry is needed: the base is Debian made by mmdebstrap from Debian's packages and
imported into podman's storage, where it stays between runs under a tag naming its recipe;
svc's image is built from the Dockerfile with `--build-arg BASE=` that base.
"""

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "CONTAINERS_CONF": str(ROOT / "harness" / "containers.conf")}
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# A small Debian with Python: merged /usr without usrmerge (which would bring perl), no
# recommended packages, no manuals, translations or documentation but the licences.
BASE_RECIPE = [
    "--variant=minbase",
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    "--aptopt=Apt::Install-Recommends false",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    "--include=python3,python3-venv,ca-certificates",
    SUITE,
]
IMAGE = "localhost/svc:test"
# The host's CA bundle, for a build behind a proxy that re-signs TLS (this machine's case).
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def podman(*arguments: str, check: bool = True, timeout: float = 600) -> str:
    done = subprocess.run(["podman", *arguments], env=ENV, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(arguments)}: {done.returncode}\n{done.stderr}")
    return done.stdout.strip()


def base_image() -> str:
    """The Debian base, made once for its recipe and kept in podman's storage."""
    digest = hashlib.sha256(" ".join(BASE_RECIPE).encode()).hexdigest()[:12]
    tag = f"localhost/svc-test-base:{SUITE}-{digest}"
    if _exists(tag):
        return tag
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "base.tar"
        subprocess.run(["mmdebstrap", "--quiet", *BASE_RECIPE, str(archive), MIRROR],
                       check=True, timeout=900)  # fmt: skip
        podman("import", "--quiet", str(archive), tag)
    return tag


def _exists(tag: str) -> bool:
    return subprocess.run(["podman", "image", "exists", tag], env=ENV).returncode == 0


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
