#!/usr/bin/python3
"""Bytes read to register a large wheel that stays on GitHub.

Builds a wheel of SIZE MiB whose payload is incompressible random bytes (stored, so the zip is as
large as it says), publishes it as a release asset of the fake GitHub (tests/e2e/fake_github.py),
runs `wheelhouse import-release` against it, and reports from the fake's request log how many
bytes of the asset registration read, beside the asset's size.

    /usr/bin/python3 bench/remote_register.py --size-mib 500 [--binary build/release/server/wheelhouse]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from fake_github import FakeGitHub  # noqa: E402
from wheelbuilder import record_hash  # noqa: E402


def write_big_wheel(directory: pathlib.Path, size_mib: int) -> pathlib.Path:
    """big_native-1.0: one stored entry of random bytes, written in 8 MiB blocks, then dist-info."""
    path = directory / "big_native-1.0-py3-none-linux_x86_64.whl"
    digest = hashlib.sha256()
    block = 8 << 20
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        with archive.open("big_native/_native.so", "w", force_zip64=True) as entry:
            for _ in range(size_mib // 8):
                data = os.urandom(block)
                digest.update(data)
                entry.write(data)
        metadata = b"Metadata-Version: 2.1\nName: big-native\nVersion: 1.0\nSummary: a large wheel\n"
        wheel = b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"
        archive.writestr("big_native-1.0.dist-info/METADATA", metadata, zipfile.ZIP_DEFLATED)
        archive.writestr("big_native-1.0.dist-info/WHEEL", wheel, zipfile.ZIP_DEFLATED)
        native_hash = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
        record = (f"big_native/_native.so,{native_hash},{(size_mib // 8) * block}\n"
                  f"big_native-1.0.dist-info/METADATA,{record_hash(metadata)},{len(metadata)}\n"
                  f"big_native-1.0.dist-info/WHEEL,{record_hash(wheel)},{len(wheel)}\n"
                  "big_native-1.0.dist-info/RECORD,,\n")
        archive.writestr("big_native-1.0.dist-info/RECORD", record, zipfile.ZIP_DEFLATED)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=500)
    parser.add_argument("--binary", default=str(HERE.parent / "build" / "release" / "server" / "wheelhouse"))
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="wheelhouse-remote-bench-") as scratch:
        scratch = pathlib.Path(scratch)
        started = time.monotonic()
        wheel = write_big_wheel(scratch, arguments.size_mib)
        size = wheel.stat().st_size
        print(f"built {wheel.name}: {size} bytes in {time.monotonic() - started:.1f} s", flush=True)

        fake = FakeGitHub(scratch / "fake")
        try:
            fake.add_release("bench", "big", "v1", [wheel])  # the fake hashes it once for its digest
            for with_digest in (True, False):
                fake.clear_log()
                data = scratch / f"data-{with_digest}"
                command = [arguments.binary, "import-release", "--data", str(data), *fake.server_flags(), "bench/big", "v1"]
                if not with_digest:  # the same asset as GitHub lists old ones: without a digest
                    fake.call("/_control/setup", {"releases": [{"owner": "bench", "repo": "big", "tag": "v1", "assets": [
                        {"path": str(wheel), "name": wheel.name, "digest": ""}]}]})
                    fake.clear_log()
                started = time.monotonic()
                result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
                elapsed = time.monotonic() - started
                if result.returncode != 0:
                    sys.exit(f"import-release failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
                log = fake.log()
                read = sum(entry["body_bytes"] for entry in log if entry["host"] == "storage")
                requests = sum(1 for entry in log if entry["host"] == "storage")
                label = "GitHub digest" if with_digest else "no digest (one streamed pass for sha256)"
                print(f"{label}: read {read} of {size} bytes ({100.0 * read / size:.4f}%) in {requests} storage "
                      f"requests, {elapsed:.2f} s", flush=True)
                print("  " + result.stdout.strip().splitlines()[0], flush=True)
        finally:
            fake.stop()


if __name__ == "__main__":
    main()
