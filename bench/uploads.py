#!/usr/bin/python3
"""Upload benchmark (issue 4, item 8) against the real `wheelhouse serve` on 127.0.0.1.

Part 1, small wheels: 1,000 distinct small wheels uploaded by 8 parallel curl processes, once
with PUT /api/v1/files/ (curl -T) and once with POST /legacy/ (curl -F, what twine speaks), each
on a fresh server: wheels per second, per-upload latency p50/p99 (curl's time_total), every
status 201; then the same files again, which must all answer 200.

Part 2, large wheels: real wheels of 256 MiB and 1 GiB whose payload is four incompressible
shared objects, ZIP_STORED or ZIP_DEFLATED (and, on request, a compressible payload deflated
about 2:1), uploaded with `curl -T` and `curl -F`. Every upload gets a fresh server, so VmHWM is
that upload's peak. Each is reported beside `openssl dgst -sha256` of the same file, taken right
before it (warm cache, best of 3): MB/s = size / curl's total time, its ratio to the hash rate,
and the server's RSS before the upload and at its peak (VmRSS sampled every 50 ms, VmHWM at the
end). Each upload is repeated (--repeat) and the fastest is reported with the median beside it.

While a large upload runs, /proc/<pid>/io and the server's CPU time are sampled too, which
splits its time into phases from outside: receiving the body (wchar grows as the spool file is
written), reading the spool back (rchar grows: once to hash the file, once more as libzip reads
every entry to check RECORD) and the rest up to the response (fsync of the blob, links, catalog).
Socket reads do not count in rchar, file reads and writes do.

Uploads above 1 MiB sent with Content-Length may be refused by the transport (see
bench/UPLOADS.md); with --transfer auto (the default) such a refusal is recorded and the same
body is sent again with Transfer-Encoding: chunked, which is what the figures then measure.

Client and server share the same machine (2 cores on the reference box, with other tenants):
every figure includes curl's own CPU, and the CPU seconds of both are reported beside the wall
times because they do not depend on the load.

    /usr/bin/python3 bench/uploads.py                      # everything, about 10-20 minutes
    /usr/bin/python3 bench/uploads.py --skip-large         # part 1 only
    /usr/bin/python3 bench/uploads.py --skip-small --large-sizes 256 --compressions stored --methods put

Results: Markdown tables on stdout and JSON in bench/results/uploads-<timestamp>.json.
Temporary data lives under --work-dir (default /tmp/wheelhouse-bench-uploads) and is deleted
at the end unless --keep is given.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import pathlib
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from dataclasses import dataclass
from typing import Sequence

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from wheelbuilder import build_wheel, escape_name, record_hash  # noqa: E402

MIB = 1 << 20
MB = 1_000_000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class BenchError(RuntimeError):
    """A run that did not do what the benchmark needs; the message says which."""


# --------------------------------------------------------------------------------------------
# The server under test


def read_proc_fields(path: pathlib.Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def kib_field(fields: dict[str, str], name: str) -> int:
    """A `VmRSS: 1234 kB` style field, in bytes."""
    return int(fields[name].split()[0]) * 1024


def cpu_seconds(pid: int) -> float:
    """utime + stime of a whole process, from /proc/<pid>/stat."""
    text = pathlib.Path(f"/proc/{pid}/stat").read_text()
    after_name = text[text.rindex(")") + 2:].split()
    return (int(after_name[11]) + int(after_name[12])) / CLOCK_TICKS  # fields 14 and 15


class Server:
    """One `wheelhouse serve` on 127.0.0.1:0 with a fresh data directory."""

    def __init__(self, binary: pathlib.Path, data: pathlib.Path, extra: Sequence[str] = ()):
        self.binary = binary
        self.data = data
        self.extra = list(extra)
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.token = ""
        self.stderr_path = data.parent / f"{data.name}-stderr.log"

    def start(self, timeout: float = 20.0) -> "Server":
        if self.data.exists():
            shutil.rmtree(self.data)
        self.data.mkdir(parents=True)
        created = subprocess.run([str(self.binary), "token", "create", "--data", str(self.data), "--name", "bench"],
                                 capture_output=True, text=True, timeout=60)
        if created.returncode != 0:
            raise BenchError(f"wheelhouse token create failed: {created.stderr.strip()}")
        self.token = created.stdout.strip()
        command = [str(self.binary), "serve", "--listen", "127.0.0.1:0", "--data", str(self.data), "--access-log", "off",
                   *self.extra]
        self._stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self._stderr)
        pattern = re.compile(rb"listening on (http://127\.0\.0\.1:\d+/)")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = pattern.search(self.stderr_path.read_bytes())
            if match:
                self.url = match.group(1).decode()
                return self
            if self.process.poll() is not None:
                raise BenchError(f"wheelhouse serve exited with {self.process.returncode}: {self.stderr()}")
            time.sleep(0.02)
        self.stop()
        raise BenchError(f"wheelhouse serve did not start within {timeout}s: {self.stderr()}")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def status(self) -> dict[str, str]:
        return read_proc_fields(pathlib.Path(f"/proc/{self.pid}/status"))

    def io(self) -> dict[str, int]:
        return {k: int(v) for k, v in read_proc_fields(pathlib.Path(f"/proc/{self.pid}/io")).items()}

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-2000:]

    def stop(self, timeout: float = 30.0) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        self.process = None

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass
class Sample:
    t: float  # seconds since the sampler started
    rss: int
    rchar: int
    wchar: int
    cpu: float
    spool_bytes: int
    blob_present: bool


class Sampler(threading.Thread):
    """Samples the server every `interval` seconds: VmRSS, /proc/<pid>/io, CPU and the spool."""

    def __init__(self, server: Server, interval: float = 0.05):
        super().__init__(daemon=True)
        self.server = server
        self.interval = interval
        self.samples: list[Sample] = []
        self.origin = time.monotonic()
        self._done = threading.Event()

    def sample(self) -> Sample:
        status = self.server.status()
        io = self.server.io()
        spool = 0
        for entry in (self.server.data / "tmp").iterdir():
            try:
                spool = max(spool, entry.stat().st_size)
            except FileNotFoundError:
                pass
        blobs = self.server.data / "blobs" / "sha256"
        blob_present = any(p.is_file() and not p.name.endswith(".metadata") for p in blobs.rglob("*"))
        return Sample(time.monotonic() - self.origin, kib_field(status, "VmRSS"), io["rchar"], io["wchar"],
                      cpu_seconds(self.server.pid), spool, blob_present)

    def run(self) -> None:
        while not self._done.is_set():
            try:
                self.samples.append(self.sample())
            except (FileNotFoundError, ProcessLookupError):
                return
            self._done.wait(self.interval)

    def finish(self) -> list[Sample]:
        self._done.set()
        self.join()
        return self.samples


# --------------------------------------------------------------------------------------------
# curl


@dataclass
class CurlResult:
    status: int
    time_total: float  # curl's own measure, from its start to the last response byte
    wall: float  # around the process: fork/exec included
    cpu: float  # curl's user + system seconds
    output: str


def run_curl(args: Sequence[str], timeout: float) -> CurlResult:
    """Runs curl with `-w '%{http_code} %{time_total}'` and the rusage of the process."""
    command = ["curl", "-sS", "--max-time", str(int(timeout)), "-w", "\n@@ %{http_code} %{time_total}",
               *args]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    output = process.stdout.read().decode(errors="replace")
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped above; keep Popen from waiting again
    wall = time.monotonic() - started
    match = re.search(r"@@ (\d{3}) ([0-9.]+)\s*$", output)
    if not match:
        raise BenchError(f"curl printed no status: {output.strip()[-500:]}")
    return CurlResult(int(match.group(1)), float(match.group(2)), wall, usage.ru_utime + usage.ru_stime,
                      output[:match.start()].strip())


def upload_args(method: str, url: str, token: str, path: pathlib.Path, chunked: bool = False) -> list[str]:
    """curl's arguments for one upload. By default curl sends Content-Length (as twine does);
    `chunked` sends the same body with Transfer-Encoding: chunked instead."""
    common = ["-u", f"__token__:{token}"] + (["-H", "Transfer-Encoding: chunked"] if chunked else [])
    if method == "put":  # a URL ending in '/' gets the file's name appended by curl
        return common + ["-T", str(path), url + "api/v1/files/"]
    return common + ["-F", f"content=@{path}", url + "legacy/"]


# --------------------------------------------------------------------------------------------
# Part 1: many small wheels


def make_small_wheels(directory: pathlib.Path, count: int) -> list[pathlib.Path]:
    """`count` distinct wheels: 50 projects, versions 1.0.0 .. 1.0.N, a few KiB each, some with
    CUDA local labels like the index's real tenants."""
    directory.mkdir(parents=True, exist_ok=True)
    projects = 50
    wheels = []
    for index in range(count):
        project = f"bench-project-{index % projects:02d}"
        release = index // projects
        version = f"1.0.{release}" + (f"+cu130torch2.{release % 10}" if index % 3 == 0 else "")
        module = escape_name(project).lower()
        body = "".join(f"def function_{i}(x):\n    return x * {i} + {index}\n\n" for i in range(60))
        files = {f"{module}/__init__.py": f"__version__ = {version!r}\n", f"{module}/core.py": body}
        wheels.append(build_wheel(directory, project, version, files=files, summary=f"Benchmark project {index}"))
    return wheels


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


def upload_many(server: Server, wheels: Sequence[pathlib.Path], method: str, clients: int, expect: int,
                timeout: float) -> dict:
    cpu_before = cpu_seconds(server.pid)
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        results = list(pool.map(lambda w: run_curl(upload_args(method, server.url, server.token, w), timeout), wheels))
    elapsed = time.monotonic() - started
    server_cpu = cpu_seconds(server.pid) - cpu_before
    statuses: dict[int, int] = {}
    for result in results:
        statuses[result.status] = statuses.get(result.status, 0) + 1
    if statuses != {expect: len(wheels)}:
        wrong = next(r for r in results if r.status != expect)
        raise BenchError(f"{method} uploads answered {statuses}, expected all {expect}; e.g. {wrong.status}: "
                         f"{wrong.output[:300]}")
    totals = [r.time_total for r in results]
    walls = [r.wall for r in results]
    return {
        "method": method,
        "expected_status": expect,
        "count": len(wheels),
        "statuses": {str(k): v for k, v in statuses.items()},
        "clients": clients,
        "elapsed_s": elapsed,
        "wheels_per_s": len(wheels) / elapsed,
        "curl_time_total_p50_ms": 1000 * percentile(totals, 0.50),
        "curl_time_total_p99_ms": 1000 * percentile(totals, 0.99),
        "curl_time_total_max_ms": 1000 * max(totals),
        "process_wall_p50_ms": 1000 * percentile(walls, 0.50),
        "process_wall_p99_ms": 1000 * percentile(walls, 0.99),
        "server_cpu_s": server_cpu,
        "client_cpu_s": sum(r.cpu for r in results),
        "loadavg_1min": [load_before, os.getloadavg()[0]],
    }


def bench_small(args, binary: pathlib.Path, work: pathlib.Path) -> dict:
    wheels_dir = work / "small-wheels"
    started = time.monotonic()
    wheels = make_small_wheels(wheels_dir, args.small_count)
    sizes = [w.stat().st_size for w in wheels]
    print(f"# built {len(wheels)} small wheels in {time.monotonic() - started:.1f}s "
          f"(mean {statistics.mean(sizes):.0f} bytes)", file=sys.stderr)
    runs = []
    for method in args.methods:
        server_args = [] if args.ingest_workers is None else ["--ingest-workers", str(args.ingest_workers)]
        with Server(binary, work / f"small-data-{method}", server_args) as server:
            for expect in (201, 200):
                run = upload_many(server, wheels, method, args.clients, expect, args.curl_timeout)
                run["server_vmhwm_bytes"] = kib_field(server.status(), "VmHWM")
                runs.append(run)
                print(f"# small {method} -> {expect}: {run['wheels_per_s']:.1f} wheels/s, "
                      f"p99 {run['curl_time_total_p99_ms']:.1f} ms", file=sys.stderr)
    shutil.rmtree(wheels_dir)
    return {"wheel_count": len(wheels), "mean_wheel_bytes": statistics.mean(sizes), "runs": runs}


# --------------------------------------------------------------------------------------------
# Part 2: one large wheel


# Maps every byte to its low nibble: 4 bits of entropy a byte, which deflate packs about 2:1,
# near what real shared objects give.
LOW_NIBBLE = bytes(b & 0x0F for b in range(256))


def random_chunks(total: int, seed: str, chunk: int = 4 * MIB):
    """Incompressible bytes, fast: AES-128-CTR of zeros from `openssl enc` (os.urandom runs at
    tens of MB/s on a loaded box)."""
    stream = subprocess.Popen(["openssl", "enc", "-aes-128-ctr", "-pbkdf2", "-nosalt", "-pass", f"pass:{seed}",
                               "-in", "/dev/zero"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert stream.stdout is not None
    try:
        remaining = total
        while remaining > 0:
            data = stream.stdout.read(min(chunk, remaining))
            if not data:
                raise BenchError("openssl enc stopped producing bytes")
            remaining -= len(data)
            yield data
    finally:
        stream.kill()
        stream.wait()


def build_large_wheel(directory: pathlib.Path, size_mib: int, compression: str, entries: int) -> pathlib.Path:
    """A valid wheel whose payload is `entries` incompressible shared objects totalling
    `size_mib` MiB, streamed to disk (never held in memory), with true RECORD hashes."""
    directory.mkdir(parents=True, exist_ok=True)
    name, version = "bench-large", f"{size_mib}.0+{compression}"
    module = escape_name(name).lower()
    dist_info = f"{escape_name(name)}-{version}.dist-info"
    path = directory / f"{escape_name(name)}-{version}-cp312-cp312-manylinux_2_28_x86_64.whl"
    method = zipfile.ZIP_STORED if compression == "stored" else zipfile.ZIP_DEFLATED
    # Incompressible payloads do not compress, so any deflate level emits stored blocks; level 0
    # emits the same at memcpy speed. The compressible payload gets level 1, fast and real.
    level = {"stored": None, "deflated": 0, "compressible": 1}[compression]
    record = []
    per_entry = size_mib * MIB // entries
    with zipfile.ZipFile(path, "w", compression=method, compresslevel=level, allowZip64=True) as archive:
        for index in range(entries):
            entry_name = f"{module}/_kernels_{index}.cpython-312-x86_64-linux-gnu.so"
            digest = hashlib.sha256()
            with archive.open(entry_name, "w", force_zip64=True) as entry:
                for chunk in random_chunks(per_entry, f"{path.name}/{index}"):
                    if compression == "compressible":
                        chunk = chunk.translate(LOW_NIBBLE)
                    digest.update(chunk)
                    entry.write(chunk)
            encoded = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
            record.append(f"{entry_name},sha256={encoded},{per_entry}")
        small = {
            f"{module}/__init__.py": f"__version__ = {version!r}\n",
            f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: large wheel\n",
            f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: bench/uploads.py\nRoot-Is-Purelib: false\n"
                                  "Tag: cp312-cp312-manylinux_2_28_x86_64\n",
        }
        for entry_name, text in small.items():
            archive.writestr(entry_name, text)
            record.append(f"{entry_name},{record_hash(text.encode())},{len(text.encode())}")
        record.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return path


def timed(command: Sequence[str], timeout: float) -> tuple[float, float]:
    """Runs a command; returns its wall time and its CPU time (user + system)."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    deadline = started + timeout
    while True:
        pid, code, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            process.kill()
            os.wait4(process.pid, 0)
            raise BenchError(f"{command[0]} took longer than {timeout}s")
        time.sleep(0.005)
    process.returncode = 0  # reaped above
    if code != 0:
        raise BenchError(f"{' '.join(command)} failed with status {code}")
    return time.monotonic() - started, usage.ru_utime + usage.ru_stime


def reference_rates(path: pathlib.Path, timeout: float) -> dict:
    """`openssl dgst -sha256` and a plain read of the same file, warm cache, best of 3."""
    size = path.stat().st_size
    timed(["cat", str(path)], timeout)  # warm the page cache
    sha, sha_cpu = min(timed(["openssl", "dgst", "-sha256", str(path)], timeout) for _ in range(3))
    read, _ = min(timed(["cat", str(path)], timeout) for _ in range(3))
    return {"openssl_sha256_s": sha, "openssl_sha256_cpu_s": sha_cpu, "openssl_sha256_MBps": size / sha / MB,
            "cat_s": read, "cat_MBps": size / read / MB}


def inflate_rate(path: pathlib.Path) -> dict:
    """CPU seconds Python's zlib (the same libz the server's libzip uses) takes to inflate the
    deflated entries: the floor for a RECORD pass over them."""
    with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
        infos = [i for i in archive.infolist() if i.compress_type == zipfile.ZIP_DEFLATED]
        started = time.process_time()
        produced = 0
        for info in infos:
            raw.seek(info.header_offset + 26)
            name_length, extra_length = int.from_bytes(raw.read(2), "little"), int.from_bytes(raw.read(2), "little")
            raw.seek(info.header_offset + 30 + name_length + extra_length)
            inflater = zlib.decompressobj(-15)
            remaining = info.compress_size
            while remaining > 0:
                piece = raw.read(min(4 * MIB, remaining))
                remaining -= len(piece)
                produced += len(inflater.decompress(piece))
        seconds = time.process_time() - started
    return {"zlib_inflate_cpu_s": seconds, "inflated_bytes": produced} if infos else {}


def durable_copy_rate(path: pathlib.Path, scratch: pathlib.Path, timeout: float) -> dict:
    """What making the file's bytes durable costs here: `dd ... conv=fsync` of a copy in the
    same file system, which is what the blob store's fsync before its link has to wait for."""
    target = scratch / "dd-copy"
    seconds, _ = timed(["dd", f"if={path}", f"of={target}", "bs=4M", "conv=fsync", "status=none"], timeout)
    target.unlink()
    return {"dd_fsync_s": seconds, "dd_fsync_MBps": path.stat().st_size / seconds / MB}


def phases(samples: list[Sample], size: int, curl_start: float, curl_end: float) -> dict:
    """Splits the upload into phases from the sampled counters (50 ms resolution), with the
    wall time and the server CPU time of each:
    receive        until the spool holds the whole body (wchar grew by the file size)
    hash pass      until the server has read the spool once (rchar: SHA-256 of the file)
    RECORD pass    until it has read it twice (libzip reads every entry to check RECORD)
    finish         from there to the response (fsync of the blob, links, catalog row)."""
    base = next((s for s in reversed(samples) if s.t <= curl_start), samples[0])
    slack = MIB  # catalog reads and zip directory reads blur the counters by a few KiB

    def first(predicate) -> Sample | None:
        return next((s for s in samples if s.t >= curl_start and predicate(s)), None)

    end = samples[-1]  # taken after the response: the server is idle again
    received = first(lambda s: s.wchar - base.wchar >= size - slack)
    hashed = first(lambda s: s.rchar - base.rchar >= size - slack)
    verified = first(lambda s: s.rchar - base.rchar >= 2 * size - slack)
    out: dict = {"resolution_s": 0.05}
    marks = [("receive", base, received), ("hash_pass", received, hashed), ("record_pass", hashed, verified),
             ("finish", verified, end)]
    for name, begin, finish in marks:
        if begin is None or finish is None:
            out[f"{name}_s"] = out[f"{name}_cpu_s"] = None
            continue
        begin_t = curl_start if begin is base else begin.t
        finish_t = curl_end if finish is end else finish.t
        out[f"{name}_s"] = max(0.0, finish_t - begin_t)
        out[f"{name}_cpu_s"] = max(0.0, finish.cpu - begin.cpu)
    out["server_cpu_s"] = end.cpu - base.cpu
    out["server_read_bytes"] = samples[-1].rchar - base.rchar
    out["server_written_bytes"] = samples[-1].wchar - base.wchar
    return out


def upload_large(binary: pathlib.Path, work: pathlib.Path, wheel: pathlib.Path, method: str, chunked: bool,
                 timeout: float) -> dict:
    """One upload on a fresh server; a refusal comes back as {"status", "refusal"} for the caller
    to judge."""
    size = wheel.stat().st_size
    with Server(binary, work / "large-data") as server:
        time.sleep(0.3)  # let start-up allocations settle
        baseline = kib_field(server.status(), "VmRSS")
        hwm_before = kib_field(server.status(), "VmHWM")
        sampler = Sampler(server)
        sampler.start()
        time.sleep(0.2)
        curl_start = time.monotonic() - sampler.origin
        load_before = os.getloadavg()[0]
        result = run_curl(upload_args(method, server.url, server.token, wheel, chunked), timeout)
        curl_end = time.monotonic() - sampler.origin
        load_after = os.getloadavg()[0]
        time.sleep(0.1)
        samples = sampler.finish()
        status = server.status()
        if result.status != 201:
            return {"method": method, "chunked": chunked, "status": result.status, "refusal": result.output[:500],
                    "curl_time_total_s": result.time_total}
        stored = list((server.data / "blobs" / "sha256").rglob("*.metadata"))
        if len(stored) != 1:
            raise BenchError(f"after the large upload the blob store holds {len(stored)} metadata files, expected 1")
        peak_sampled = max(s.rss for s in samples)
        return {
            "method": method,
            "chunked": chunked,
            "status": result.status,
            "bytes": size,
            "curl_time_total_s": result.time_total,
            "MBps": size / result.time_total / MB,
            "client_cpu_s": result.cpu,
            "loadavg_1min": [load_before, load_after],
            "server_rss_baseline_bytes": baseline,
            "server_vmhwm_at_start_bytes": hwm_before,
            "server_rss_peak_sampled_bytes": peak_sampled,
            "server_vmhwm_bytes": kib_field(status, "VmHWM"),
            "phases": phases(samples, size, curl_start, curl_end),
            "samples": [s.__dict__ for s in samples],
        }


def bench_large(args, binary: pathlib.Path, work: pathlib.Path) -> dict:
    wheels_dir = work / "large-wheels"
    runs = []
    for size_mib in args.large_sizes:
        for compression in args.compressions:
            started = time.monotonic()
            wheel = build_large_wheel(wheels_dir, size_mib, compression, args.large_entries)
            size = wheel.stat().st_size
            print(f"# built {wheel.name} ({size / MIB:.1f} MiB, {compression}) in {time.monotonic() - started:.1f}s",
                  file=sys.stderr)
            durable = durable_copy_rate(wheel, work, args.curl_timeout) | inflate_rate(wheel)
            for method in args.methods:
                for attempt in range(1, args.repeat + 1):
                    # The box is shared: hash right before each upload, so both see the same load.
                    reference = reference_rates(wheel, args.curl_timeout) | durable
                    run = upload_large(binary, work, wheel, method, args.transfer == "chunked", args.curl_timeout)
                    refused = None
                    if run["status"] != 201 and args.transfer == "auto":
                        # What plain curl and twine send was refused: keep that, then measure the
                        # pipeline with the same body sent chunked.
                        refused = run
                        print(f"# large {size_mib} MiB {compression} {method} with Content-Length answered "
                              f"{run['status']}: {run['refusal'].strip()}; measuring it chunked", file=sys.stderr)
                        shutil.rmtree(work / "large-data", ignore_errors=True)
                        run = upload_large(binary, work, wheel, method, True, args.curl_timeout)
                    if run["status"] != 201:
                        raise BenchError(f"large {method} upload of {wheel.name} answered {run['status']}: "
                                         f"{run['refusal']}")
                    run.update({"wheel": wheel.name, "size_mib": size_mib, "compression": compression,
                                "entries": args.large_entries, "attempt": attempt, "reference": reference,
                                "content_length_refused": refused,
                                "ratio_to_sha256": run["MBps"] / reference["openssl_sha256_MBps"]})
                    runs.append(run)
                    print(f"# large {size_mib} MiB {compression} {method} #{attempt}: {run['MBps']:.0f} MB/s "
                          f"({100 * run['ratio_to_sha256']:.0f}% of sha256 {reference['openssl_sha256_MBps']:.0f} "
                          f"MB/s), peak RSS {run['server_vmhwm_bytes'] / MIB:.1f} MiB, load {run['loadavg_1min'][0]:.1f}",
                          file=sys.stderr)
                    shutil.rmtree(work / "large-data", ignore_errors=True)
            wheel.unlink()
    return {"runs": runs, "summary": summarize_large(runs)}


def summarize_large(runs: list[dict]) -> list[dict]:
    """One row per wheel and method over its repeats: the fastest upload (least disturbed by
    the other tenants of the box) beside the fastest hash, the median, and the highest RSS."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault((run["wheel"], run["method"]), []).append(run)
    rows = []
    for (wheel, method), group in groups.items():
        best = min(group, key=lambda r: r["curl_time_total_s"])
        best_hash = min(group, key=lambda r: r["reference"]["openssl_sha256_s"])["reference"]
        rows.append({
            "wheel": wheel, "method": method, "size_mib": best["size_mib"], "compression": best["compression"],
            "entries": best["entries"], "bytes": best["bytes"], "repeats": len(group),
            "chunked": best["chunked"],
            "content_length_status": best["content_length_refused"]["status"] if best["content_length_refused"] else None,
            "best_s": best["curl_time_total_s"],
            "median_s": statistics.median(r["curl_time_total_s"] for r in group),
            "best_MBps": best["MBps"],
            "best_sha256_s": best_hash["openssl_sha256_s"],
            "best_sha256_MBps": best_hash["openssl_sha256_MBps"],
            "sha256_cpu_s": best_hash["openssl_sha256_cpu_s"],
            "ratio": best["MBps"] / best_hash["openssl_sha256_MBps"],
            "rss_baseline_bytes": max(r["server_rss_baseline_bytes"] for r in group),
            "rss_peak_sampled_bytes": max(r["server_rss_peak_sampled_bytes"] for r in group),
            "vmhwm_bytes": max(r["server_vmhwm_bytes"] for r in group),
            "best_phases": {k: v for k, v in best["phases"].items()},
            "server_cpu_s_min": min(r["phases"]["server_cpu_s"] for r in group),
            "client_cpu_s_min": min(r["client_cpu_s"] for r in group),
            "loadavg_1min": [r["loadavg_1min"][0] for r in group],
            "dd_fsync_s": best["reference"]["dd_fsync_s"],
            "zlib_inflate_cpu_s": best["reference"].get("zlib_inflate_cpu_s"),
        })
    return rows


# --------------------------------------------------------------------------------------------
# Report


def environment(binary: pathlib.Path) -> dict:
    def output(command: Sequence[str]) -> str:
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    cpu = next((line.split(":", 1)[1].strip() for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cores": os.cpu_count(),
        "cpu": cpu,
        "sha_ni": " sha_ni " in pathlib.Path("/proc/cpuinfo").read_text(),
        "kernel": platform.release(),
        "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        "work_dir_fs": output(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", "/tmp"]),
        "curl": output(["curl", "--version"]).splitlines()[0] if output(["curl", "--version"]) else "",
        "openssl": output(["openssl", "version"]),
        "binary": str(binary),
        "commit": output(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"]),
        "note": "client (curl) and server share the same cores; loopback only",
    }


def mib(value: float) -> str:
    return f"{value / MIB:.1f}"


def markdown(report: dict) -> str:
    lines = []
    env = report["environment"]
    lines.append(f"Machine: {env['cores']} cores ({env['cpu']}, sha_ni={env['sha_ni']}), shared by curl and the server;"
                 f" 127.0.0.1 only; data on {env['work_dir_fs']}.")
    lines.append(f"Binary: {env['binary']} ({env['binary_note'] or 'built from ' + env['commit'][:10]}).")
    small = report.get("small")
    if small:
        lines += ["", f"Small wheels: {small['wheel_count']} distinct wheels (mean {small['mean_wheel_bytes']:.0f} bytes), "
                      f"{small['runs'][0]['clients']} parallel curl processes", "",
                  "| method | answer | wheels/s | elapsed s | curl p50 ms | curl p99 ms | max ms | process p99 ms |"
                  " server CPU s | curl CPU s | load 1m |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for run in small["runs"]:
            name = "PUT /api/v1/files/" if run["method"] == "put" else "POST /legacy/ (-F)"
            lines.append(f"| {name} | all {run['expected_status']} | {run['wheels_per_s']:.1f} | {run['elapsed_s']:.2f} | "
                         f"{run['curl_time_total_p50_ms']:.1f} | {run['curl_time_total_p99_ms']:.1f} | "
                         f"{run['curl_time_total_max_ms']:.1f} | {run['process_wall_p99_ms']:.1f} | "
                         f"{run['server_cpu_s']:.2f} | {run['client_cpu_s']:.2f} | {run['loadavg_1min'][0]:.1f} |")
    large = report.get("large")
    if large:
        def seconds(value) -> str:
            return "–" if value is None else f"{value:.2f}"

        lines += ["", "Large wheels: fresh server per upload, best of the repeats (the least disturbed by the box's "
                      "other tenants) beside the best `openssl dgst -sha256` of the same file; MB = 10^6 bytes, "
                      "MiB = 2^20", "",
                  "| wheel | method | body | file MiB | sha256 MB/s | upload s (best / median) | upload MB/s | ratio |"
                  " RSS before MiB | peak RSS sampled MiB | VmHWM MiB | load 1m |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for row in large["summary"]:
            loads = "/".join(f"{x:.1f}" for x in row["loadavg_1min"])
            lines.append(
                f"| {row['size_mib']} MiB {row['compression']} ({row['entries']} entries) | {row['method']} | "
                f"{'chunked' if row['chunked'] else 'length'} | {mib(row['bytes'])} | {row['best_sha256_MBps']:.0f} | "
                f"{row['best_s']:.2f} / {row['median_s']:.2f} | {row['best_MBps']:.0f} | {100 * row['ratio']:.0f}% | "
                f"{mib(row['rss_baseline_bytes'])} | {mib(row['rss_peak_sampled_bytes'])} | {mib(row['vmhwm_bytes'])} | "
                f"{loads} |")
        lines += ["", "Where the best upload's time went (from /proc/<pid>/io and CPU sampled every 50 ms: wall s / "
                      "server CPU s), beside CPU seconds that do not depend on the load; CPU ratio = openssl sha256 CPU s / "
                      "server CPU s", "",
                  "| wheel | method | receive | hash pass | RECORD pass | finish (fsync, link, catalog) |"
                  " server CPU s | curl CPU s | openssl sha256 CPU s | CPU ratio | zlib inflate CPU s |"
                  " dd conv=fsync s |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in large["summary"]:
            p = row["best_phases"]
            cells = " | ".join(f"{seconds(p[f'{name}_s'])} / {seconds(p[f'{name}_cpu_s'])}"
                               for name in ("receive", "hash_pass", "record_pass", "finish"))
            lines.append(f"| {row['size_mib']} MiB {row['compression']} | {row['method']} | {cells} | "
                         f"{row['server_cpu_s_min']:.2f} | {row['client_cpu_s_min']:.2f} | {row['sha256_cpu_s']:.2f} | "
                         f"{100 * row['sha256_cpu_s'] / row['server_cpu_s_min']:.0f}% | "
                         f"{seconds(row.get('zlib_inflate_cpu_s'))} | {row['dd_fsync_s']:.2f} |")
        refusals = [row for row in large["summary"] if row["content_length_status"]]
        if refusals:
            example = next(r for r in large["runs"] if r.get("content_length_refused"))["content_length_refused"]
            lines += ["", f"Sent with Content-Length (as plain curl and twine send it) every upload marked 'chunked' "
                          f"above was refused with {example['status']} `{example['refusal'].strip()}`; the figures "
                          f"are the same bodies sent with Transfer-Encoding: chunked."]
    return "\n".join(lines)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build" / "release" / "server" / "wheelhouse")
    parser.add_argument("--note", default="", help="what the binary is, when it is not this checkout's build")
    parser.add_argument("--work-dir", type=pathlib.Path, default=pathlib.Path("/tmp/wheelhouse-bench-uploads"))
    parser.add_argument("--small-count", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--ingest-workers", type=int, help="passed to serve for part 1 (default: the server's)")
    parser.add_argument("--methods", type=lambda s: s.split(","), default=["put", "form"], help="put,form")
    parser.add_argument("--large-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[256, 1024],
                        help="MiB, comma-separated")
    parser.add_argument("--compressions", type=lambda s: s.split(","), default=["stored", "deflated"],
                        help="stored, deflated (incompressible payload), compressible (deflated, about 2:1)")
    parser.add_argument("--large-entries", type=int, default=4, help="how many .so entries share the payload")
    parser.add_argument("--repeat", type=int, default=3, help="uploads of each large wheel and method")
    parser.add_argument("--transfer", choices=["auto", "length", "chunked"], default="auto",
                        help="large uploads: Content-Length as curl sends it (length), Transfer-Encoding: chunked, "
                             "or Content-Length falling back to chunked when refused (auto)")
    parser.add_argument("--curl-timeout", type=float, default=600, help="seconds any one curl or openssl may take")
    parser.add_argument("--skip-small", action="store_true")
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--render", type=pathlib.Path, help="print the tables of an earlier JSON result and exit")
    parser.add_argument("--keep", action="store_true", help="leave --work-dir behind")
    parser.add_argument("--output", type=pathlib.Path, help="JSON path (default bench/results/uploads-<time>.json)")
    arguments = parser.parse_args()
    for method in arguments.methods:
        if method not in ("put", "form"):
            parser.error(f"--methods takes put and form, not {method!r}")
    for compression in arguments.compressions:
        if compression not in ("stored", "deflated", "compressible"):
            parser.error(f"--compressions takes stored, deflated and compressible, not {compression!r}")
    return arguments


def main() -> int:
    args = parse_arguments()
    if args.render:
        report = json.loads(args.render.read_text())
        if "large" in report:
            report["large"]["summary"] = summarize_large(report["large"]["runs"])
        print(markdown(report))
        return 0
    binary = args.binary.resolve()
    if not binary.is_file():
        print(f"no server binary at {binary}: cmake --preset release && cmake --build --preset release "
              f"--target wheelhouse", file=sys.stderr)
        return 2
    work = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    report: dict = {"environment": environment(binary) | {"binary_note": args.note}, "arguments": {k: str(v) for k, v in vars(args).items()}}
    try:
        if not args.skip_small:
            report["small"] = bench_small(args, binary, work)
        if not args.skip_large:
            report["large"] = bench_large(args, binary, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(markdown(report))
    output = args.output or REPO_ROOT / "bench" / "results" / \
        f"uploads-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=1))
    print(f"\nJSON: {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
