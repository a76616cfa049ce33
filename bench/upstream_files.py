"""Pull-through of a large upstream file (issue 26): a 1 GiB wheel on a stand-in PyPI (nginx over
HTTPS on loopback with a throwaway CA, tests/e2e/upstream_standins.py), fetched with curl
- through `wheelhouse serve --upstream` the first time (streamed to the client while its sha256
  is checked and a copy kept), then again (served from the kept copy);
- through nginx doing the same job (the peer: `proxy_pass` to the same stand-in over TLS with
  the same CA, `proxy_store` keeping the file; it checks no hash), the first time and again;
- and, as the rate a cached upstream file should match, the same wheel ingested into wheelhouse
  as a local file.
With --reference, another wheelhouse binary (the previous one) pulls the file through as well.
Each run starts every pull-through empty; who goes first turns. Resident memory and CPU-seconds
per GiB of each server are sampled meanwhile.

    /usr/bin/python3 bench/upstream_files.py [--size-mib 1024] [--runs 3] [--work DIR] [--reference BIN]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "bench"))

from remote_downloads import MiB, big_wheel, cpu_budget, proxied_run, rss_mib, wait_for_port  # noqa: E402
from server_process import ServerProcess, wheelhouse_binary  # noqa: E402
from simple_pages import free_port  # noqa: E402
from upstream_standins import IndexTree, NginxUpstreams  # noqa: E402

STORE_CONF = """worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    sendfile on;
    proxy_temp_path {prefix}/proxy_temp;
    client_body_temp_path {prefix}/client_temp;
    server {{
        listen 127.0.0.1:{port};
        location /packages/ {{
            root {store};
            error_page 404 = @fetch;
        }}
        location @fetch {{
            internal;
            proxy_pass {upstream};
            proxy_http_version 1.1;
            proxy_ssl_trusted_certificate {ca};
            proxy_ssl_verify on;
            proxy_ssl_name localhost;  # nginx checks DNS names only; the certificate has both
            proxy_store on;
            proxy_store_access user:rw;
            root {store};
        }}
    }}
}}
"""


class NginxStore:
    """nginx pulling through with proxy_store: the first request fetches and keeps, the next
    ones are served from the kept file."""

    def __init__(self, work: pathlib.Path, upstream: str, ca: pathlib.Path):
        self.prefix = work / "nginx-store"
        shutil.rmtree(self.prefix, ignore_errors=True)
        (self.prefix / "proxy_temp").mkdir(parents=True)
        self.store = self.prefix / "store"
        port = free_port()
        (self.prefix / "nginx.conf").write_text(STORE_CONF.format(prefix=self.prefix, port=port, store=self.store,
                                                                  upstream=upstream, ca=ca))
        self.process = subprocess.Popen(["nginx", "-c", str(self.prefix / "nginx.conf"), "-p", str(self.prefix)])
        self.url = f"http://127.0.0.1:{port}/"
        wait_for_port(port, "nginx (proxy_store)")

    @property
    def worker_pid(self) -> int:
        return children(self.process.pid)[0]

    def empty(self) -> None:
        shutil.rmtree(self.store, ignore_errors=True)
        self.store.mkdir()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def children(pid: int) -> list[int]:
    return [int(child) for child in pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def kept_files(server: ServerProcess) -> int:
    with urllib.request.urlopen(server.url + "api/v1/upstream", timeout=10) as answer:
        return json.load(answer)["kept"]["files"]


def wait_until_kept(server: ServerProcess) -> None:
    """The copy is synced after the client's last byte: wait for it before the next measurement,
    so no other fetch shares the disk with it."""
    deadline = time.monotonic() + 120
    while kept_files(server) < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kept_files(server) == 1, "wheelhouse kept no copy"


def measure(pid: int, url: str, storage_pid: int, gib: float, expected: int) -> dict:
    budget = cpu_budget(storage_pid, pid)
    speed, size, peak, cpu = proxied_run(pid, url, rss_mib(pid), budget, gib)
    assert size == expected, (url, size, expected)
    return {"MiB/s": speed / MiB, "peak RSS MiB": peak, "CPU s/GiB": cpu["server"]}


def first_fetch_by(binary: str, standin: NginxUpstreams, storage_pid: int, gib: float, expected: int,
                   data: pathlib.Path, file_path: str) -> dict:
    """The first fetch through another wheelhouse binary, on a data folder of its own."""
    shutil.rmtree(data, ignore_errors=True)
    ours = os.environ.get("WHEELHOUSE_BIN")
    os.environ["WHEELHOUSE_BIN"] = binary
    try:
        server = ServerProcess(data, *standin.flags()).start()
    finally:
        if ours is None:
            del os.environ["WHEELHOUSE_BIN"]
        else:
            os.environ["WHEELHOUSE_BIN"] = ours
    try:
        urllib.request.urlopen(server.url + "simple/remote-bench/", timeout=30).read()
        figures = measure(server.process.pid, server.url + file_path, storage_pid, gib, expected)
        wait_until_kept(server)
        return figures
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", default="/tmp/wheelhouse-upstream-files-bench")
    parser.add_argument("--reference", help="another wheelhouse binary, whose first fetch is measured alike")
    arguments = parser.parse_args()
    work = pathlib.Path(arguments.work)
    work.mkdir(parents=True, exist_ok=True)
    binary = wheelhouse_binary()

    wheel = big_wheel(work / "dist", arguments.size_mib * MiB)
    size = wheel.stat().st_size
    gib = size / (1 << 30)
    tree = IndexTree(work / "pypi", "json")
    entry = tree.add(wheel)
    standin = NginxUpstreams(work / "standin", {"pypi": tree}).start()
    storage_pid = children(standin.process.pid)[0]
    upstream_root = standin.url("pypi").removesuffix("simple/").rstrip("/")
    file_path = f"files/{entry['sha256']}/{wheel.name}"

    local_data = work / "data-local"
    if not (local_data / "catalog.db").exists():
        shutil.rmtree(local_data, ignore_errors=True)
        subprocess.run([binary, "ingest", "--data", str(local_data), str(wheel)], check=True, capture_output=True,
                       timeout=900)
    local = ServerProcess(local_data).start()
    peer = NginxStore(work, upstream_root, standin.ca)
    rows = []
    try:
        for run in range(1, arguments.runs + 1):
            data = work / "data-upstream"
            shutil.rmtree(data, ignore_errors=True)
            pulled = ServerProcess(data, *standin.flags()).start()
            peer.empty()
            try:
                urllib.request.urlopen(pulled.url + "simple/remote-bench/", timeout=30).read()
                row = {"run": run}

                def wheelhouse_first() -> None:
                    row["wheelhouse first"] = measure(pulled.process.pid, pulled.url + file_path, storage_pid, gib, size)
                    wait_until_kept(pulled)

                def nginx_first() -> None:
                    row["nginx first"] = measure(peer.worker_pid, peer.url + "packages/" + wheel.name, storage_pid,
                                                 gib, size)

                def reference_first() -> None:
                    row["reference first"] = first_fetch_by(arguments.reference, standin, storage_pid, gib, size,
                                                            work / "data-reference", file_path)

                steps = [wheelhouse_first, nginx_first] + ([reference_first] if arguments.reference else [])
                turn = (run - 1) % len(steps)
                for step in steps[turn:] + steps[:turn]:
                    step()
                subprocess.run(["sync"], check=True)  # nginx's stored copy too, before the served-kept runs
                row["wheelhouse kept"] = measure(pulled.process.pid, pulled.url + file_path, storage_pid, gib, size)
                row["nginx stored"] = measure(peer.worker_pid, peer.url + "packages/" + wheel.name, storage_pid,
                                              gib, size)
                row["wheelhouse local"] = measure(local.process.pid, local.url + file_path, storage_pid, gib, size)
            finally:
                pulled.stop()
            rows.append(row)
            print(f"run {run}: " + "; ".join(f"{k} {v['MiB/s']:.0f} MiB/s" for k, v in row.items() if k != "run"),
                  flush=True)
    finally:
        peer.stop()
        local.stop()
        standin.stop()

    paths = ["wheelhouse first", "nginx first"] + (["reference first"] if arguments.reference else []) + [
        "wheelhouse kept", "nginx stored", "wheelhouse local"]
    ratios = {"first: wheelhouse / nginx": ("wheelhouse first", "nginx first")}
    if arguments.reference:
        ratios["first: wheelhouse / reference"] = ("wheelhouse first", "reference first")
    ratios["kept / local"] = ("wheelhouse kept", "wheelhouse local")
    print("\n| run | " + " | ".join(paths + list(ratios)) + " |")
    print("| --- |" + " ---: |" * (len(paths) + len(ratios)))
    for row in rows:
        cells = [f"{row[p]['MiB/s']:.0f} MiB/s, {row[p]['CPU s/GiB']:.2f} CPU-s/GiB, {row[p]['peak RSS MiB']:.0f} MiB"
                 for p in paths]
        cells += [f"{row[a]['MiB/s'] / row[b]['MiB/s']:.2f}×" for a, b in ratios.values()]
        print(f"| {row['run']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
