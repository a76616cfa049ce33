#!/usr/bin/python3
"""Wheel downloads (`/files/<sha256>/<name>`) from wheelhouse's own disk, beside nginx serving the
same blob files with sendfile, in the same run.

Builds two real wheels (a 2 MiB one, as most CUDA kernels' small builds, and a 256 MiB one, as a
flash-attn build), ingests them, starts `wheelhouse serve` and an nginx whose root is the blob
store, then per round: wrk with 16 connections on the 2 MiB wheel against each server in turn
(req/s, p99, server CPU per request), and three whole downloads of the 256 MiB wheel with curl
(MB/s). Nothing is asserted; Markdown goes to stdout and everything to bench/results/.

    /usr/bin/python3 bench/file_downloads.py [--rounds 3] [--duration 8]

Everything listens on 127.0.0.1 only, every wrk run stops by itself after --duration, and both
servers are stopped when the script ends, also on failure.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from simple_pages import (REPO_ROOT, Wheelhouse, children_of, cpu_seconds, free_port, load_average, proc_status,
                          run_wrk, save_results)

sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from wheelbuilder import build_wheel  # noqa: E402

NGINX_CONF = """worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  open_file_cache max=100;
  types {{ }}
  default_type application/octet-stream;
  server {{ listen 127.0.0.1:{port}; root {root}; }}
}}
"""


def make_wheel(directory: pathlib.Path, name: str, mib: int) -> pathlib.Path:
    return build_wheel(directory, name, "1.0+cu130", tags="cp312-cp312-linux_x86_64",
                       files={f"{name}/_kernels.so": os.urandom(mib * 1024 * 1024)})


def curl_mb_per_s(url: str) -> float:
    done = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{speed_download}", url],
                          capture_output=True, text=True, timeout=300, check=True)
    return float(done.stdout) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2, help="server I/O threads and nginx workers")
    args = parser.parse_args()
    args.nice, args.wrk_threads = 0, 2

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="file-downloads-"))
    scratch.chmod(0o755)  # nginx's workers run as nobody
    server = Wheelhouse(args.binary, scratch / "data", args.threads, scratch / "wheelhouse-stderr.log", args.nice)
    nginx = None
    report = {"load_average_before": load_average(), "rounds": []}
    try:
        small = make_wheel(scratch / "in", "small_kernels", 2)
        large = make_wheel(scratch / "in", "large_kernels", 256)
        subprocess.run([str(args.binary), "ingest", "--data", str(scratch / "data"), str(scratch / "in")],
                       check=True, capture_output=True)
        server.start()
        blobs = scratch / "data" / "blobs"
        port = free_port()
        (scratch / "nginx").mkdir()
        (scratch / "nginx" / "nginx.conf").write_text(
            NGINX_CONF.format(workers=args.threads, prefix=scratch / "nginx", port=port, root=blobs))
        nginx = subprocess.Popen(["nginx", "-c", str(scratch / "nginx" / "nginx.conf"), "-p", str(scratch / "nginx")])
        time.sleep(0.5)

        urls = {}
        for wheel in (small, large):
            digest = subprocess.run(["sha256sum", str(wheel)], capture_output=True, text=True).stdout.split()[0]
            urls[wheel] = {"wheelhouse": f"http://127.0.0.1:{server.port}/files/{digest}/{wheel.name}",
                           "nginx": f"http://127.0.0.1:{port}/sha256/{digest[:2]}/{digest[2:4]}/{digest}"}
        pids = {"wheelhouse": server.process.pid, "nginx": nginx.pid}
        for wheel, by_server in urls.items():  # both must send exactly the wheel, or nothing is measured
            for name, url in by_server.items():
                got = subprocess.run(["curl", "-sS", "-f", url], capture_output=True, timeout=120).stdout
                if got != wheel.read_bytes():
                    raise RuntimeError(f"{name} did not send {wheel.name} whole from {url}")

        def cpu_of(name: str) -> float:
            if name == "wheelhouse":
                return sum(cpu_seconds(server.process.pid))
            return sum(sum(cpu_seconds(pid)) for pid in children_of(nginx.pid))

        for round_number in range(args.rounds):
            order = ("nginx", "wheelhouse") if round_number % 2 == 0 else ("wheelhouse", "nginx")
            row = {}
            for name in order:
                before = cpu_of(name)
                run = run_wrk(urls[small][name], "*/*", args, args.duration, None)
                run["cpu_ms_per_request"] = (cpu_of(name) - before) * 1000 / max(run.get("requests", 1), 1)
                run["large_mb_per_s"] = [curl_mb_per_s(urls[large][name]) for _ in range(3)]
                row[name] = run
                print(f"  round {round_number + 1} {name:<10} 2 MiB: {run['requests_per_second']:>7,.0f} req/s  "
                      f"p99 {run['latency_p99_us'] / 1000:6.2f} ms  {run['cpu_ms_per_request']:.3f} ms CPU/req;  "
                      f"256 MiB: {', '.join(f'{v:,.0f}' for v in run['large_mb_per_s'])} MB/s", flush=True)
            report["rounds"].append(row)
        report["wheelhouse_rss_kib"] = proc_status(pids["wheelhouse"])
    finally:
        if nginx:
            nginx.terminate()
            nginx.wait(timeout=10)
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_after"] = load_average()

    def median(name: str, key: str) -> float:
        return statistics.median(row[name][key] for row in report["rounds"])

    def median_large(name: str) -> float:
        return statistics.median(v for row in report["rounds"] for v in row[name]["large_mb_per_s"])

    print("\n| download | nginx | wheelhouse | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for label, key in (("2 MiB wheel, req/s", "requests_per_second"), ("2 MiB wheel, p99 (ms)", "latency_p99_us"),
                       ("2 MiB wheel, server CPU per request (ms)", "cpu_ms_per_request")):
        scale = 1000 if key == "latency_p99_us" else 1
        n, w = median("nginx", key) / scale, median("wheelhouse", key) / scale
        print(f"| {label} | {n:,.2f} | {w:,.2f} | {w / n:.2f} |")
    n, w = median_large("nginx"), median_large("wheelhouse")
    print(f"| 256 MiB wheel, one curl, MB/s | {n:,.0f} | {w:,.0f} | {w / n:.2f} |")
    print(f"\nwheelhouse RSS at the end: {report['wheelhouse_rss_kib']['VmRSS'] / 1024:.1f} MiB "
          f"(peak {report['wheelhouse_rss_kib']['VmHWM'] / 1024:.1f} MiB)")
    print(f"written: {save_results(report, 'file-downloads').relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
