"""The Dockerfile as shipped, built and run with podman: the image serves, ingests and uploads
a wheel, pip installs from it, its health check passes, it runs as uid 10001, SIGTERM drains it
to exit 0, and a read-only or unusable data volume stops it with a message.

tests/run-all.sh turns these on (WHEELHOUSE_CONTAINER_TESTS=1) once it has made podman usable
without a registry (shared/tools/container-setup.sh beside the clone: local Debian base images);
once on, a podman that cannot build is a failure, not a skip. The image's compile borrows the
host's ccache, but only the image's own earlier builds hit in it (ccache keys by the compiler's
mtime, and the image's g++ has its own): the first build on a machine compiles everything, about
20 minutes on two cores beside the other tests. WHEELHOUSE_IMAGE=<tag> tests an image built already.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from server_process import REPO_ROOT
from test_uploads import curl
from wheelbuilder import build_wheel

pytestmark = pytest.mark.skipif(os.environ.get("WHEELHOUSE_CONTAINER_TESTS") != "1",
                                reason="container tests need podman made usable first; tests/run-all.sh "
                                       "does that and sets WHEELHOUSE_CONTAINER_TESTS=1")


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def image():
    # Asked for, so a podman that cannot do the job fails the run instead of hiding it.
    if shutil.which("podman") is None:
        pytest.fail("podman is not installed; run shared/tools/container-setup.sh")
    for base in ("docker.io/library/debian:12", "docker.io/library/debian:12-slim"):
        if podman("image", "exists", base, check=False).returncode != 0:
            pytest.fail(f"no local {base} base image; run shared/tools/container-setup.sh")
    prebuilt = os.environ.get("WHEELHOUSE_IMAGE")
    if prebuilt:
        yield prebuilt
        return
    tag = "localhost/wheelhouse:e2e"
    # --format docker keeps HEALTHCHECK (OCI images have no such field). --layers=false keeps no
    # per-step images: with them, every run left the 2.5 GB build stage behind and filled the disk.
    build = ["build", "--pull=never", "--network", "host", "--format", "docker", "--layers=false", "-t", tag]
    host_cache = Path(os.environ.get("CCACHE_DIR", Path.home() / ".cache" / "ccache"))
    if host_cache.is_dir():
        build += ["--build-arg", "CCACHE_DIR=/host-ccache", "--volume", f"{host_cache}:/host-ccache"]
    podman(*build, str(REPO_ROOT), timeout=3600)
    yield tag
    podman("rmi", "-f", tag, check=False)


@pytest.fixture
def volume():
    name = f"wheelhouse-e2e-{uuid.uuid4().hex[:12]}"
    podman("volume", "create", name)
    yield name
    podman("volume", "rm", "-f", name, check=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_health(url: str, container: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    logs = podman("logs", container, check=False)
    raise AssertionError(f"the container did not answer /healthz:\n{logs.stdout}{logs.stderr}")


def test_image_serves_ingests_and_pip_installs(image, volume, tmp_path, pip):
    port = free_port()
    name = f"wheelhouse-e2e-{uuid.uuid4().hex[:12]}"
    podman("run", "-d", "--name", name, "--network", "host", "-e", f"WHEELHOUSE_LISTEN=127.0.0.1:{port}",
           "-v", f"{volume}:/var/lib/wheelhouse", image)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for_health(url, name)
        assert podman("exec", name, "id", "-u").stdout.strip() == "10001"
        assert podman("healthcheck", "run", name, check=False).returncode == 0

        token = podman("exec", name, "wheelhouse", "token", "create", "--name", "ci").stdout.strip()
        uploaded = build_wheel(tmp_path / "a", "kernels", "1.0.0+cu130torch2.10")
        status, body = curl("-u", f"__token__:{token}", "-T", str(uploaded), url + "api/v1/files/" + uploaded.name)
        assert status == 201, body

        on_disk = build_wheel(tmp_path / "b", "kernels-extras", "0.2")
        podman("cp", str(on_disk), f"{name}:/tmp/{on_disk.name}")
        ingested = podman("exec", name, "wheelhouse", "ingest", f"/tmp/{on_disk.name}", check=False)
        assert ingested.returncode == 0, ingested.stdout + ingested.stderr

        target = tmp_path / "site"
        pip("install", "--index-url", url + "simple/", "--target", str(target), "kernels", "kernels-extras")
        assert (target / "kernels-1.0.0+cu130torch2.10.dist-info").is_dir()
        assert (target / "kernels_extras-0.2.dist-info").is_dir()

        podman("stop", "-t", "30", name, timeout=60)
        state = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        assert state == "0", podman("logs", name, check=False).stderr  # SIGTERM drains, then exit 0
        logs = podman("logs", name).stdout + podman("logs", name).stderr
        assert "draining" in logs
    finally:
        podman("rm", "-f", name, check=False)

    # The data outlived the container: a new one serves the same catalog.
    second = f"wheelhouse-e2e-{uuid.uuid4().hex[:12]}"
    podman("run", "-d", "--name", second, "--network", "host", "-e", f"WHEELHOUSE_LISTEN=127.0.0.1:{port}",
           "-v", f"{volume}:/var/lib/wheelhouse", image)
    try:
        wait_for_health(f"http://127.0.0.1:{port}/", second)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/simple/kernels-extras/", timeout=10) as page:
            assert on_disk.name in page.read().decode()
    finally:
        podman("rm", "-f", second, check=False)


def test_a_read_only_volume_stops_the_container_with_a_reason(image, volume):
    # Once empty, once laid out by a first run: both must refuse, not serve reads only.
    for attempt in ("empty", "populated"):
        if attempt == "populated":
            laid_out = podman("run", "--rm", "-v", f"{volume}:/var/lib/wheelhouse", "--entrypoint",
                              "/usr/local/bin/wheelhouse", image, "token", "create", "--name", "x", check=False)
            assert laid_out.returncode == 0, laid_out.stderr
        result = podman("run", "--rm", "--network", "host", "-e", "WHEELHOUSE_LISTEN=127.0.0.1:0",
                        "-v", f"{volume}:/var/lib/wheelhouse:ro", image, check=False, timeout=60)
        output = result.stdout + result.stderr
        assert result.returncode == 1, f"{attempt}: {output}"
        assert "cannot use data folder /var/lib/wheelhouse" in output, output
        assert "Read-only file system" in output, output


def test_a_missing_data_folder_stops_the_container_with_a_reason(image):
    result = podman("run", "--rm", "--network", "host", "--read-only", "-e", "WHEELHOUSE_LISTEN=127.0.0.1:0",
                    "-e", "WHEELHOUSE_DATA=/srv/not-mounted", image, check=False, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "cannot use data folder /srv/not-mounted" in output, output
