"""Proxied download throughput: a 1 GiB release asset on the fake GitHub's storage host
(tests/e2e/fake_github.py, HTTPS on loopback), fetched directly with curl, through `wheelhouse
serve` in proxy mode (this build, and --baseline when given), and through nginx doing the same
job (the peer: `proxy_pass` to the same storage URL over TLS with the same CA, no cache, no temp
file), in turns within each run; and each server's resident memory and CPU time meanwhile.
nginx is given the storage URL GitHub's download redirects to (it does not follow redirects), so
it makes one request fewer, and it checks no SHA-256: both favour the peer.

    /usr/bin/python3 bench/remote_downloads.py [--size-mib 1024] [--runs 3] [--baseline BIN] [--work DIR]

Needs the release build (build/release/server/wheelhouse, or WHEELHOUSE_BIN), curl and nginx.
"""

from __future__ import annotations

import argparse
import resource
import base64
import hashlib
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from fake_github import FakeGitHub  # noqa: E402
from server_process import ServerProcess, wheelhouse_binary  # noqa: E402
from simple_pages import free_port  # noqa: E402  (bench/, beside this script)

MiB = 1 << 20

NGINX_CONF = """worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    proxy_temp_path {prefix}/proxy_temp;
    client_body_temp_path {prefix}/client_temp;
    server {{
        listen 127.0.0.1:{port};
        location = /asset {{
            proxy_pass {upstream};
            proxy_http_version 1.1;
            proxy_ssl_trusted_certificate {ca};
            proxy_ssl_verify on;
            proxy_ssl_server_name on;
            proxy_max_temp_file_size 0;
        }}
    }}
}}
"""


def wait_for_port(port: int, what: str) -> None:
    """Until something accepts on 127.0.0.1:port, for 10 s at most."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


class NginxPeer:
    """nginx proxying the asset's storage URL: pid and url, as a ServerProcess has them."""

    def __init__(self, work: pathlib.Path, storage_url: str, ca: pathlib.Path):
        prefix = work / "nginx"
        shutil.rmtree(prefix, ignore_errors=True)
        prefix.mkdir(parents=True)
        port = free_port()
        (prefix / "nginx.conf").write_text(NGINX_CONF.format(prefix=prefix, port=port, upstream=storage_url, ca=ca))
        self.process = subprocess.Popen(["nginx", "-c", str(prefix / "nginx.conf"), "-p", str(prefix)])
        self.asset_url = f"http://127.0.0.1:{port}/asset"
        wait_for_port(port, f"nginx (see {prefix / 'error.log'})")

    @property
    def worker_pid(self) -> int:
        """The one worker, which does the proxying (the master only watches it)."""
        master = self.process.pid
        return int(pathlib.Path(f"/proc/{master}/task/{master}/children").read_text().split()[0])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def storage_url_of(url: str, ca: pathlib.Path) -> str:
    """Where the asset's download URL redirects (GitHub's signed storage URL)."""
    done = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{redirect_url}", "--cacert", str(ca), url],
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def record_hash(digest: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def big_wheel(directory: pathlib.Path, size: int) -> pathlib.Path:
    """A valid wheel whose one large member is stored (not deflated) random bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "remote_bench-1.0-py3-none-any.whl"
    if path.exists():
        return path
    dist_info = "remote_bench-1.0.dist-info"
    small = {
        "remote_bench/__init__.py": b"",
        f"{dist_info}/METADATA": b"Metadata-Version: 2.1\nName: remote-bench\nVersion: 1.0\nSummary: benchmark\n",
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, data in small.items():
            archive.writestr(name, data)
            records.append(f"{name},{record_hash(hashlib.sha256(data).digest())},{len(data)}")
        digest = hashlib.sha256()
        with archive.open("remote_bench/_blob.bin", "w", force_zip64=True) as member:
            left = size
            while left > 0:
                block = os.urandom(min(8 * MiB, left))
                digest.update(block)
                member.write(block)
                left -= len(block)
        records.append(f"remote_bench/_blob.bin,{record_hash(digest.digest())},{size}")
        records.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return path


class cpu_budget:
    """Where the CPU of one download went: the storage host, wheelhouse (and its busiest thread),
    curl, and how much of the machine stayed idle. On a box where all three share the cores, the
    sum of their CPU-seconds per GiB bounds the rate, whatever any one of them does."""

    def __init__(self, storage_pid: int, server_pid: int | None):
        self.pids = {"storage": storage_pid, **({"server": server_pid} if server_pid else {})}
        self.before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        self.threads_before = thread_cpu(server_pid) if server_pid else {}
        self.curl_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.machine_before = machine_jiffies()

    def end(self, gib: float) -> dict[str, float]:
        spent = {name: (cpu_seconds(pid) - self.before[name]) / gib for name, pid in self.pids.items()}
        curl = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent["curl"] = (curl.ru_utime + curl.ru_stime - self.curl_before.ru_utime - self.curl_before.ru_stime) / gib
        if "server" in self.pids:
            after = thread_cpu(self.pids["server"])
            spent["busiest thread"] = max((after[t] - self.threads_before.get(t, 0.0) for t in after), default=0.0) / gib
        busy, total = (a - b for a, b in zip(machine_jiffies(), self.machine_before))
        spent["idle %"] = 100.0 * (1 - busy / total) if total else 0.0
        return spent


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of every core since boot, from /proc/stat."""
    fields = [int(x) for x in pathlib.Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def thread_cpu(pid: int) -> dict[str, float]:
    spent = {}
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            spent[task.name] = cpu_seconds(pid, task.name)
        except OSError:
            pass  # the thread ended
    return spent


def curl_speed(url: str, *extra: str) -> tuple[float, int]:
    """(bytes a second, bytes) of one download to /dev/null."""
    done = subprocess.run(["curl", "-sS", "-f", "-o", "/dev/null", "-w", "%{speed_download} %{size_download}", *extra,
                           url], capture_output=True, text=True, check=True, timeout=900)
    speed, size = done.stdout.split()
    return float(speed), int(size)


def rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int, thread: str | None = None) -> float:
    stat = f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat"
    fields = pathlib.Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proxied_run(pid: int, url: str, idle: float, budget: cpu_budget, gib: float
                ) -> tuple[float, int, float, dict[str, float]]:
    """(bytes a second, bytes, peak RSS in MiB, CPU budget per GiB) of one proxied download
    through the server process `pid`."""
    peak = [idle]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mib(pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        speed, size = curl_speed(url)
    finally:
        stop.set()
        sampler.join()
    return speed, size, peak[0], budget.end(gib)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="a wheelhouse binary to measure alike (the one before the change)")
    parser.add_argument("--work", default="/tmp/wheelhouse-remote-bench")
    arguments = parser.parse_args()
    work = pathlib.Path(arguments.work)
    work.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    wheel = big_wheel(work / "dist", arguments.size_mib * MiB)
    print(f"asset {wheel.name}: {wheel.stat().st_size / MiB:.0f} MiB (made in {time.monotonic() - started:.0f} s)")
    sha256 = hashlib.sha256()
    with open(wheel, "rb") as stream:
        while block := stream.read(8 * MiB):
            sha256.update(block)
    binaries = {"this build": wheelhouse_binary()}
    if arguments.baseline:
        binaries["baseline"] = str(pathlib.Path(arguments.baseline).resolve())
    fake = FakeGitHub(work / "fake")
    servers: dict[str, ServerProcess | NginxPeer] = {}
    rows = []
    try:
        fake.add_release("bench", "assets", "v1", [wheel])
        url = fake.download_url("bench", "assets", "v1", wheel.name)
        for label, binary in binaries.items():
            data = work / f"data-{label.replace(' ', '-')}"
            shutil.rmtree(data, ignore_errors=True)
            registered = subprocess.run([binary, "register", "--data", str(data), *fake.server_flags(),
                                         "--mode", "proxy", url], capture_output=True, text=True, timeout=900)
            if registered.returncode != 0:
                sys.exit(f"register failed: {registered.stdout}{registered.stderr}")
            os.environ["WHEELHOUSE_BIN"] = binary  # ServerProcess starts the binary named there
            servers[label] = ServerProcess(data, *fake.server_flags()).start()
        print(registered.stdout.strip())
        servers["nginx"] = NginxPeer(work, storage_url_of(url, fake.ca), fake.ca)
        def serving_pid(server: ServerProcess | NginxPeer) -> int:
            return server.worker_pid if isinstance(server, NginxPeer) else server.process.pid

        idle = {label: rss_mib(serving_pid(server)) for label, server in servers.items()}
        gib = wheel.stat().st_size / (1 << 30)
        for run in range(1, arguments.runs + 1):
            budget = cpu_budget(fake.process.pid, None)
            direct, size = curl_speed(url, "-L", "--cacert", str(fake.ca))
            assert size == wheel.stat().st_size
            row = {"run": run, "direct": direct, "direct budget": budget.end(gib)}
            # Who goes first alternates, so neither always meets a warmer page cache.
            order = list(servers.items()) if run % 2 else list(reversed(servers.items()))
            for label, server in order:
                if isinstance(server, NginxPeer):
                    proxied_url = server.asset_url
                else:
                    proxied_url = f"{server.url}files/{sha256.hexdigest()}/{wheel.name}"
                budget = cpu_budget(fake.process.pid, serving_pid(server))
                speed, proxied_size, peak, cpu = proxied_run(serving_pid(server), proxied_url, idle[label], budget, gib)
                assert proxied_size == size
                row[label] = (speed, peak, cpu)
            rows.append(row)
            print(f"run {run}: direct {direct / MiB:.0f} MiB/s; " + "; ".join(
                f"{label} {row[label][0] / MiB:.0f} MiB/s ({row[label][0] / direct:.0%}), RSS idle "
                f"{idle[label]:.0f} → peak {row[label][1]:.0f} MiB, server CPU {row[label][2]['server'] * gib:.2f} s"
                for label in servers))
    finally:
        for server in servers.values():
            server.stop()
        fake.stop()
    print("\n| run | direct from storage | " + " | ".join(f"{label} (proxy) | ratio" for label in servers) +
          " | RSS idle → peak | server CPU s/GiB |")
    print("| --- | ---: | " + " | ".join("---: | ---:" for _ in servers) + " | ---: | ---: |")
    for row in rows:
        cells = []
        for label in servers:
            cells.append(f"{row[label][0] / MiB:.0f} MiB/s | {row[label][0] / row['direct']:.0%}")
        rss = ", ".join(f"{idle[label]:.0f} → {row[label][1]:.0f} MiB" for label in servers)
        cpu = ", ".join(f"{row[label][2]['server']:.2f}" for label in servers)
        print(f"| {row['run']} | {row['direct'] / MiB:.0f} MiB/s | " + " | ".join(cells) + f" | {rss} | {cpu} |")
    print("\nCPU-seconds per GiB of each process, and the machine's idle share, during each download:\n")
    columns = ["storage", "curl", "server", "busiest thread", "all", "idle %"]
    print("| run | path | " + " | ".join(columns) + " |")
    print("| --- | --- |" + " ---: |" * len(columns))
    for row in rows:
        for path in ["direct"] + list(servers):
            spent = dict(row["direct budget"] if path == "direct" else row[path][2])
            spent["all"] = spent["storage"] + spent["curl"] + spent.get("server", 0.0)
            cells = [f"{spent[c]:.0f}" if c == "idle %" else (f"{spent[c]:.2f}" if c in spent else "-") for c in columns]
            print(f"| {row['run']} | {path} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
