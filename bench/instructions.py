#!/usr/bin/python3
"""Instructions per request, wheelhouse beside nginx doing the same job, counted by valgrind's
callgrind: a figure this shared 2-core box cannot blur, since it counts work, not time. It sees
user space only (both servers' syscalls are counted by `strace -c` elsewhere: bench/README.md).

Each server runs alone under callgrind (wheelhouse --threads 1 --access-log off, nginx one worker
without a master, logs off); wrk warms it up, the counters are zeroed, wrk loads it for
--duration seconds, the counters are dumped, and their total is divided by wrk's request count.
Cases, each for nginx, this binary and (with --reference) another wheelhouse binary:
- page:       a cached project page (pip's JSON, 12 wheels) over plain HTTP, kept alive;
- tls_page:   the same page over kept-alive TLS;
- tls_new:    a new TLS connection for each request (Connection: close): the handshake;
- large_page: a cached page of 240 wheels (over 64 KiB) over plain HTTP, kept alive.
nginx serves the bytes wheelhouse sent as static files, with the same certificate and key.
Nothing is asserted; Markdown goes to stdout and every figure to bench/results/.

    /usr/bin/python3 bench/instructions.py [--duration 8] [--reference OLD_BINARY]
"""

from __future__ import annotations

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

from simple_pages import PIP_ACCEPT, REPO_ROOT, free_port, save_results

sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from fake_github import make_certificates  # noqa: E402
from wheelbuilder import build_wheel  # noqa: E402

NGINX_CONF = """master_process off; worker_processes 1; daemon off;
pid {prefix}/nginx.pid; error_log {prefix}/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000; open_file_cache max=100;
  types {{ }} default_type application/octet-stream;
  server {{ listen 127.0.0.1:{plain}; root {root}; }}
  server {{
    listen 127.0.0.1:{tls} ssl; root {root};
    ssl_certificate {certificate}; ssl_certificate_key {key};
    ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:SSL:10m;
  }}
}}
"""


def wrk(url: str, seconds: int, close: bool) -> int:
    command = ["wrk", "-t1", "-c2", f"-d{seconds}s", "-H", f"Accept: {PIP_ACCEPT}", url]
    if close:
        command[-1:-1] = ["-H", "Connection: close"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return int(re.search(r"(\d+) requests in", out).group(1))


def wait_for(url: str, deadline_s: float = 90) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if subprocess.run(["curl", "-sk", "-o", "/dev/null", "--max-time", "5", url]).returncode == 0:
            return
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer under callgrind")


def counted(command: list[str], out: pathlib.Path, url: str, seconds: int, close: bool) -> dict:
    """Starts `command` under callgrind, loads `url`, and returns instructions per request."""
    process = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p", *command],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(url)
        wrk(url, 2, close)  # warm: the page rendered and cached, the code paged in
        subprocess.run(["callgrind_control", "-z", str(process.pid)], capture_output=True, check=True)
        requests = wrk(url, seconds, close)
        subprocess.run(["callgrind_control", "-d", str(process.pid)], capture_output=True, check=True)
        dump = pathlib.Path(f"{out}.{process.pid}.1")
        deadline = time.monotonic() + 30
        while not (dump.exists() and "summary:" in dump.read_text(errors="replace")) and time.monotonic() < deadline:
            time.sleep(0.2)
        total = int(re.search(r"^summary: (\d+)", dump.read_text(errors="replace"), re.M).group(1))
        return {"requests": requests, "instructions": total, "per_request": total / max(requests, 1)}
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build" / "release" / "server" / "wheelhouse")
    parser.add_argument("--reference", type=pathlib.Path, help="another wheelhouse binary, counted alike")
    parser.add_argument("--duration", type=int, default=8, help="seconds of wrk per count")
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="instructions-"))
    work.chmod(0o755)  # nginx reads the pages as nobody
    try:
        (work / "certs").mkdir()
        _, certificate, key = make_certificates(work / "certs")
        for path in (work / "certs", certificate, key):
            path.chmod(0o755 if path.is_dir() else 0o644)
        wheels = work / "in"
        for cuda in ("cu126", "cu128", "cu130"):
            for python in ("cp310", "cp311", "cp312", "cp313"):
                build_wheel(wheels, "kernels", f"1.0+{cuda}torch2.8", tags=f"{python}-{python}-linux_x86_64")
        for minor in range(60):
            for python in ("cp310", "cp311", "cp312", "cp313"):
                build_wheel(wheels, "big-project", f"1.{minor}+cu130", tags=f"{python}-{python}-linux_x86_64")
        data = work / "data"
        subprocess.run([str(args.binary), "ingest", "--data", str(data), str(wheels)], check=True, capture_output=True)

        binaries = {"wheelhouse": args.binary} | ({"reference": args.reference} if args.reference else {})
        pages = {"page": "simple/kernels/", "large_page": "simple/big-project/"}
        root = work / "root"
        for path in pages.values():
            (root / path).mkdir(parents=True)
        plain, tls = free_port(), free_port()
        serve = [str(args.binary), "serve", "--data", str(data), "--listen", f"127.0.0.1:{plain}", "--threads", "1",
                 "--access-log", "off"]
        server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(f"http://127.0.0.1:{plain}/healthz")
            for path in pages.values():
                body = subprocess.run(["curl", "-sf", "-H", f"Accept: {PIP_ACCEPT}", f"http://127.0.0.1:{plain}/{path}"],
                                      capture_output=True, check=True).stdout
                (root / path / "index.json").write_bytes(body)
        finally:
            server.terminate()
            server.wait(timeout=30)
        (work / "nginx").mkdir()
        (work / "nginx" / "nginx.conf").write_text(NGINX_CONF.format(
            prefix=work / "nginx", plain=plain, tls=tls, root=root, certificate=certificate, key=key))

        cases = {  # name: (scheme, path, close)
            "page": ("http", pages["page"], False),
            "tls_page": ("https", pages["page"], False),
            "tls_new": ("https", pages["page"], True),
            "large_page": ("http", pages["large_page"], False),
        }
        report: dict = {"duration": args.duration, "cases": {}}
        for case, (scheme, path, close) in cases.items():
            port = tls if scheme == "https" else plain
            row = {}
            nginx_path = path + "index.json"
            row["nginx"] = counted(["nginx", "-c", str(work / "nginx" / "nginx.conf"), "-p", str(work / "nginx")],
                                   work / f"{case}-nginx", f"{scheme}://127.0.0.1:{port}/{nginx_path}", args.duration,
                                   close)
            for name, binary in binaries.items():
                command = [str(binary), "serve", "--data", str(data), "--listen", f"127.0.0.1:{port}", "--threads", "1",
                           "--access-log", "off"]
                if scheme == "https":
                    command += ["--tls-cert", str(certificate), "--tls-key", str(key)]
                row[name] = counted(command, work / f"{case}-{name}", f"{scheme}://127.0.0.1:{port}/{path}",
                                    args.duration, close)
            report["cases"][case] = row
            print(f"  {case:<11} " + "  ".join(f"{name} {figures['per_request']:>10,.0f}" for name, figures in row.items()),
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    names = ["nginx", *binaries]
    print("\n| user-space instructions per request | " + " | ".join(names) + " | wheelhouse ÷ nginx |")
    print("| --- | " + " | ".join("---:" for _ in names) + " | ---: |")
    for case, row in report["cases"].items():
        ratio = row["wheelhouse"]["per_request"] / row["nginx"]["per_request"]
        print(f"| {case} | " + " | ".join(f"{row[name]['per_request']:,.0f}" for name in names) + f" | {ratio:.2f} |")
    print(f"\nwritten: {save_results(report, 'instructions')}")


if __name__ == "__main__":
    main()
