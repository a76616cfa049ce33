#!/usr/bin/python3
"""Uploads beside registrations that wait on a silent release host (issue 27 item 1).

For each binary (--binary, and --baseline when given, taking turns): a fresh server with the
fake GitHub (tests/e2e/fake_github.py) as its only release host; CLIENTS threads PUT distinct
small wheels on kept-alive connections for SECONDS, first alone, then while STALLED
registrations (`POST /api/v1/remote` with "verify") wait on an asset whose host sends its
headers and goes silent. Reported per run: uploads answered 201 per second, p50/p99 latency of
the 201s, other answers (503 busy, timeouts), the server's CPU per 201 and its peak RSS.

    cmake --build --preset release --target wheelhouse
    /usr/bin/python3 bench/uploads_beside_registrations.py --baseline /work/ref/wheelhouse-e4b7451
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time

BENCH_DIR = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "tests" / "e2e"))
from fake_github import FakeGitHub  # noqa: E402
from simple_pages import cpu_seconds, proc_status, save_results  # noqa: E402
from test_remote_register import native_wheel, post, sha256_of  # noqa: E402
from test_uploads import make_token  # noqa: E402
from wheelbuilder import build_wheel  # noqa: E402

import server_process  # noqa: E402


def upload_for(port: int, token: str, wheels: list[pathlib.Path], seconds: float) -> list[tuple[int, float]]:
    """PUTs wheels in turn on one kept-alive connection until time is up: (status, seconds) each."""
    answers = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    deadline = time.monotonic() + seconds
    for wheel in wheels:
        if time.monotonic() >= deadline:
            break
        started = time.monotonic()
        try:
            connection.request("PUT", f"/api/v1/files/{wheel.name}", body=wheel.read_bytes(),
                               headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            status = response.status
        except (TimeoutError, OSError):
            status = 0  # no answer in 30 s
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        answers.append((status, time.monotonic() - started))
    connection.close()
    return answers


def summarise(answers: list[tuple[int, float]], seconds: float, cpu: float) -> dict:
    created = sorted(latency for status, latency in answers if status == 201)
    others: dict[str, int] = {}
    for status, _ in answers:
        if status != 201:
            others[str(status or "no answer")] = others.get(str(status or "no answer"), 0) + 1
    quantile = (lambda q: created[min(len(created) - 1, int(q * len(created)))] * 1000) if created else (lambda q: 0.0)
    return {"created_per_s": len(created) / seconds, "p50_ms": quantile(0.50), "p99_ms": quantile(0.99),
            "others": others, "cpu_ms_per_upload": 1000 * cpu / max(1, len(created))}


def one_run(binary: str, fake: FakeGitHub, scratch: pathlib.Path, arguments, stalled_url: str, digest: str,
            wheels: list[list[pathlib.Path]], label: str) -> dict:
    os.environ["WHEELHOUSE_BIN"] = binary
    data = scratch / f"data-{label}"
    token = make_token(binary, data, "bench")
    server = server_process.ServerProcess(data, *fake.server_flags(), access_log="off").start()
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    result = {"binary": binary, "label": label}
    try:
        for phase, stalled in (("alone", 0), ("beside stalled registrations", arguments.stalled)):
            with concurrent.futures.ThreadPoolExecutor(arguments.stalled + arguments.clients) as pool:
                held = [pool.submit(post, server.url + "api/v1/remote", token,
                                    {"url": stalled_url, "sha256": digest, "verify": True}) for _ in range(stalled)]
                time.sleep(0.5 if stalled else 0)  # the registrations reach the server first
                before = sum(cpu_seconds(server.process.pid))
                lists = [wheels[client][len(wheels[client]) // 2:] if stalled else wheels[client][:len(wheels[client]) // 2]
                         for client in range(arguments.clients)]
                runs = [pool.submit(upload_for, port, token, lists[client], arguments.seconds)
                        for client in range(arguments.clients)]
                answers = [answer for run in runs for answer in run.result()]
                cpu = sum(cpu_seconds(server.process.pid)) - before
                result[phase] = summarise(answers, arguments.seconds, cpu)
                for registration in held:
                    registration.result(timeout=300)
        result["peak_rss_mib"] = proc_status(server.process.pid)["VmHWM"] / 1024
    finally:
        server.stop(timeout=60)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(BENCH_DIR.parent / "build" / "release" / "server" / "wheelhouse"))
    parser.add_argument("--baseline", help="the binary before the change, measured in the same run")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--stalled", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--wheels", type=int, default=1000, help="wheels per client and phase, at most")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="wheelhouse-lane-bench-") as scratch:
        scratch = pathlib.Path(scratch)
        wheels = [[build_wheel(scratch / "dist" / str(client), f"lane-bench-{client}", f"1.{number}")
                   for number in range(2 * arguments.wheels)] for client in range(arguments.clients)]
        stalled = native_wheel(scratch / "release", "stalled-kernels", "1.0", 7)
        fake = FakeGitHub(scratch / "fake")
        try:
            fake.add_release("bench", "slow", "v1", [stalled])
            # Headers, then silence for longer than a phase: each registration is held to the read timeout.
            fake.set_fault(stalled.name, stall_after=0, stall_seconds=arguments.seconds + 40)
            url = fake.download_url("bench", "slow", "v1", stalled.name)
            binaries = [("after", arguments.binary)] + ([("before", arguments.baseline)] if arguments.baseline else [])
            results = [one_run(binary, fake, scratch, arguments, url, sha256_of(stalled), wheels, label)
                       for label, binary in binaries]
        finally:
            fake.stop()

    print("| binary | phase | 201/s | p50 ms | p99 ms | other answers | CPU ms/201 | peak RSS MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for result in results:
        for phase in ("alone", "beside stalled registrations"):
            row = result[phase]
            print(f"| {result['label']} | {phase} | {row['created_per_s']:.0f} | {row['p50_ms']:.1f} | "
                  f"{row['p99_ms']:.1f} | {json.dumps(row['others'])} | {row['cpu_ms_per_upload']:.2f} | "
                  f"{result['peak_rss_mib']:.0f} |")
    print(f"results: {save_results({'runs': results, 'arguments': vars(arguments)}, 'uploads_beside_registrations')}")


if __name__ == "__main__":
    main()
