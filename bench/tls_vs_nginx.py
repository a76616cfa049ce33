#!/usr/bin/python3
"""HTTPS served by wheelhouse itself (--tls-cert) beside nginx terminating TLS with the same
certificate and key, in the same run (issue 25 item 1).

Per round, alternating which server goes first:
- a cached project page (pip's JSON) over kept-alive TLS connections: wrk, req/s, p99, server CPU
  per request;
- new TLS connections, one request each (wrk with Connection: close): connections/s, p99, CPU;
- one whole download of a large wheel with curl: MB/s, and wheelhouse's peak RSS before and after.
nginx serves the same page bytes (fetched from wheelhouse) as a static file, and the wheel from the
same blob file, with sendfile on (which nginx, without kernel TLS, turns into read and SSL_write).
Nothing is asserted; Markdown goes to stdout and everything to bench/results/.

    /usr/bin/python3 bench/tls_vs_nginx.py [--rounds 3] [--duration 6] [--large-mib 1024]
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

from simple_pages import (PIP_ACCEPT, REPO_ROOT, Wheelhouse, children_of, cpu_seconds, free_port, load_average,
                          proc_status, run_wrk, save_results)

sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from fake_github import make_certificates  # noqa: E402
from wheelbuilder import build_wheel  # noqa: E402

NGINX_CONF = """worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  open_file_cache max=100;
  types {{ }}
  default_type application/octet-stream;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {certificate};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305;
    ssl_session_cache shared:SSL:10m;
    root {root};
  }}
}}
"""


def sha256_of(path: pathlib.Path) -> str:
    return subprocess.run(["sha256sum", str(path)], capture_output=True, text=True, check=True).stdout.split()[0]


def curl(url: str, ca: pathlib.Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "-f", "--cacert", str(ca), *extra, url], capture_output=True, timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=6, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2, help="server I/O threads and nginx workers")
    parser.add_argument("--large-mib", type=int, default=1024)
    args = parser.parse_args()
    args.nice, args.wrk_threads = 0, 2

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="tls-vs-nginx-"))
    scratch.chmod(0o755)  # nginx's workers run as nobody
    (scratch / "certs").mkdir()
    ca, certificate, key = make_certificates(scratch / "certs")
    for path in (scratch / "certs", certificate, key):
        path.chmod(0o755 if path.is_dir() else 0o644)
    server = Wheelhouse(args.binary, scratch / "data", args.threads, scratch / "wheelhouse-stderr.log", args.nice)
    server.command += ["--tls-cert", str(certificate), "--tls-key", str(key)]
    nginx = None
    report = {"load_average_before": load_average(), "rounds": [], "large_mib": args.large_mib}
    try:
        wheels = scratch / "in"
        for cuda in ("cu126", "cu128", "cu130"):
            for python in ("cp310", "cp311", "cp312", "cp313"):
                build_wheel(wheels, "kernels", f"1.0+{cuda}torch2.8", tags=f"{python}-{python}-linux_x86_64")
        with open(scratch / "large.so", "wb") as out:  # written in pieces: the bench must not hold 1 GiB
            for _ in range(args.large_mib):
                out.write(os.urandom(1 << 20))
        large = build_wheel(wheels, "large_kernels", "1.0+cu130", tags="cp312-cp312-linux_x86_64",
                            files={"large_kernels/_kernels.so": (scratch / "large.so").read_bytes()})
        (scratch / "large.so").unlink()
        subprocess.run([str(args.binary), "ingest", "--data", str(scratch / "data"), str(wheels)], check=True,
                       capture_output=True)
        shutil.rmtree(wheels)
        server.start()
        base = f"https://127.0.0.1:{server.port}/"
        page = curl(base + "simple/kernels/", ca, "-H", f"Accept: {PIP_ACCEPT}").stdout
        root = scratch / "root"
        (root / "simple" / "kernels").mkdir(parents=True)
        (root / "simple" / "kernels" / "index.json").write_bytes(page)
        digest = sha256_of(large)
        blob = scratch / "data" / "blobs" / "sha256" / digest[:2] / digest[2:4] / digest
        os.link(blob, root / "large.whl")
        port = free_port()
        (scratch / "nginx").mkdir()
        (scratch / "nginx" / "nginx.conf").write_text(NGINX_CONF.format(
            workers=args.threads, prefix=scratch / "nginx", port=port, root=root, certificate=certificate, key=key))
        nginx = subprocess.Popen(["nginx", "-c", str(scratch / "nginx" / "nginx.conf"), "-p", str(scratch / "nginx")])
        time.sleep(0.5)
        nginx_base = f"https://127.0.0.1:{port}/"
        urls = {"wheelhouse": {"page": base + "simple/kernels/", "large": f"{base}files/{digest}/{large.name}"},
                "nginx": {"page": nginx_base + "simple/kernels/index.json", "large": nginx_base + "large.whl"}}
        for name, by_kind in urls.items():  # both must send the same bytes, or nothing is measured
            if curl(by_kind["page"], ca, "-H", f"Accept: {PIP_ACCEPT}").stdout != page:
                raise RuntimeError(f"{name} did not send the page from {by_kind['page']}")
            if curl(by_kind["large"], ca, "-r", "0-1048575").stdout != large.read_bytes()[:1 << 20]:
                raise RuntimeError(f"{name} did not send the wheel from {by_kind['large']}")

        def cpu_of(name: str) -> float:
            if name == "wheelhouse":
                return sum(cpu_seconds(server.process.pid))
            return sum(sum(cpu_seconds(pid)) for pid in children_of(nginx.pid))

        report["wheelhouse_rss_kib_before"] = proc_status(server.process.pid)
        for round_number in range(args.rounds):
            order = ("nginx", "wheelhouse") if round_number % 2 == 0 else ("wheelhouse", "nginx")
            row = {}
            for name in order:
                runs = {}
                for kind, headers in (("kept_alive", ()), ("new_connections", ("Connection: close",))):
                    before = cpu_of(name)
                    run = run_wrk(urls[name]["page"], PIP_ACCEPT, args, args.duration, None, headers)
                    run["cpu_ms_per_request"] = (cpu_of(name) - before) * 1000 / max(run.get("requests", 1), 1)
                    runs[kind] = run
                before = cpu_of(name)
                timing = curl(urls[name]["large"], ca, "-o", "/dev/null", "-w", "%{speed_download}")
                runs["large_mb_per_s"] = float(timing.stdout) / 1e6
                runs["large_cpu_s"] = cpu_of(name) - before
                row[name] = runs
                print(f"  round {round_number + 1} {name:<10} kept-alive {runs['kept_alive']['requests_per_second']:>8,.0f} "
                      f"req/s p99 {runs['kept_alive']['latency_p99_us'] / 1000:6.2f} ms "
                      f"{runs['kept_alive']['cpu_ms_per_request']:.3f} ms CPU/req; new connections "
                      f"{runs['new_connections']['requests_per_second']:>7,.0f}/s p99 "
                      f"{runs['new_connections']['latency_p99_us'] / 1000:6.2f} ms "
                      f"{runs['new_connections']['cpu_ms_per_request']:.3f} ms CPU/conn; "
                      f"{args.large_mib} MiB: {runs['large_mb_per_s']:,.0f} MB/s, {runs['large_cpu_s']:.2f} s CPU",
                      flush=True)
            report["rounds"].append(row)
        report["wheelhouse_rss_kib_after"] = proc_status(server.process.pid)
    finally:
        if nginx:
            nginx.terminate()
            nginx.wait(timeout=10)
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_after"] = load_average()

    def median(name: str, kind: str, key: str) -> float:
        return statistics.median(row[name][kind][key] for row in report["rounds"])

    print("\n| over TLS | nginx | wheelhouse | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for kind, label in (("kept_alive", "cached page, kept-alive"), ("new_connections", "new connection per request")):
        for key, unit, scale in (("requests_per_second", "req/s", 1), ("latency_p99_us", "p99 (ms)", 1000),
                                 ("cpu_ms_per_request", "CPU per request (ms)", 1)):
            n, w = median("nginx", kind, key) / scale, median("wheelhouse", kind, key) / scale
            print(f"| {label}, {unit} | {n:,.3f} | {w:,.3f} | {w / n:.2f} |")
    for key, unit in (("large_mb_per_s", "MB/s"), ("large_cpu_s", "server CPU (s)")):
        n = statistics.median(row["nginx"][key] for row in report["rounds"])
        w = statistics.median(row["wheelhouse"][key] for row in report["rounds"])
        print(f"| {args.large_mib} MiB download, {unit} | {n:,.2f} | {w:,.2f} | {w / n:.2f} |")
    before, after = report["wheelhouse_rss_kib_before"], report["wheelhouse_rss_kib_after"]
    print(f"\nwheelhouse RSS {before['VmRSS'] / 1024:.1f} MiB before the rounds, {after['VmRSS'] / 1024:.1f} MiB after "
          f"(peak {after['VmHWM'] / 1024:.1f} MiB)")
    print(f"written: {save_results(report, 'tls-vs-nginx').relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
