#!/usr/bin/python3
"""Cached simple pages while a stream of cache misses runs beside them, on this build and on a
reference build (the binary before the change), alternated in one run (issue 15, item 4).

What pip sees is measured: wrk on one cached project page (/simple/flash-attn/) alone, then the
same while uploads to other projects arrive one after another (each one drops the project list
from the page cache) and a second wrk asks for that list (/simple/, 10,000 projects), so nearly
every list request is a miss that renders the whole list. The reference renders each miss on the
I/O thread that took the request, once per request; this build renders it on the read pool,
once for all the requests that wait for it. Each build serves its own copy of one data folder
(blobs hard-linked) and receives the same uploads; who goes first alternates between rounds.

    /usr/bin/python3 bench/pages_beside_misses.py --reference /tmp/ref/build/release/server/wheelhouse

Everything listens on 127.0.0.1 only, and every wrk run stops by itself after --duration.
Prints a Markdown table and writes every figure to bench/results/.
"""

from __future__ import annotations

import argparse
import http.client
import pathlib
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import urllib.request

from simple_pages import (PIP_ACCEPT, REPO_ROOT, Wheelhouse, add_admin_corpus_arguments, ingested_corpus, load_average,
                          run_text, run_wrk, save_results, with_connections)
from upload_rate import fresh_data, wheel_set

PAGE = "/simple/flash-attn/"
LIST = "/simple/"


def upload_token(binary: pathlib.Path, data: pathlib.Path) -> str:
    made = subprocess.run([str(binary), "token", "create", "--data", str(data), "--name", "bench", "--scope", "upload"],
                          capture_output=True, text=True, timeout=60, check=True)
    return made.stdout.strip()


class Uploader(threading.Thread):
    """PUTs `wheels` one at a time on one kept-alive connection, one every `interval` seconds (a
    pace both builds keep, so both see the same stream of changes), until stopped."""

    def __init__(self, port: int, token: str, wheels: list[str], interval: float):
        super().__init__(daemon=True)
        self.port, self.token, self.wheels, self.interval = port, token, wheels, interval
        self.stopping = threading.Event()
        self.statuses: dict[int, int] = {}

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        for path in self.wheels:
            if self.stopping.wait(self.interval):
                break
            body = pathlib.Path(path).read_bytes()
            connection.request("PUT", "/api/v1/files/" + pathlib.Path(path).name, body=body,
                               headers={"Authorization": f"Bearer {self.token}",
                                        "Content-Type": "application/octet-stream"})
            answer = connection.getresponse()
            answer.read()
            self.statuses[answer.status] = self.statuses.get(answer.status, 0) + 1
        connection.close()


def page_renders(base: str) -> int:
    with urllib.request.urlopen(base + "/metrics", timeout=60) as answer:
        text = answer.read().decode()
    found = re.search(r"^wheelhouse_page_cache_misses_total (\d+)", text, re.MULTILINE)
    return int(found.group(1)) if found else -1


def measure(binary: pathlib.Path, data: pathlib.Path, wheels: list[str], args: argparse.Namespace,
            scratch: pathlib.Path, label: str) -> dict:
    token = upload_token(binary, data)
    server = Wheelhouse(binary, data, args.threads, scratch / f"{label}-stderr.log", args.nice)
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        for path in (PAGE, LIST):  # both into the cache
            with urllib.request.urlopen(base + path, timeout=60) as answer:
                answer.read()
        pages = with_connections(args, args.page_connections)
        run_wrk(base + PAGE, PIP_ACCEPT, pages, args.warmup, None)
        alone = run_wrk(base + PAGE, PIP_ACCEPT, pages, args.duration, None)

        renders_before = page_renders(base)
        uploader = Uploader(server.port, token, wheels, args.upload_interval)
        lists: dict = {}
        list_load = with_connections(args, args.miss_connections)
        list_thread = threading.Thread(target=lambda: lists.update(
            run_wrk(base + LIST, PIP_ACCEPT, list_load, args.duration, None)))
        uploader.start()
        list_thread.start()
        beside = run_wrk(base + PAGE, PIP_ACCEPT, pages, args.duration, None)
        list_thread.join()
        uploader.stopping.set()
        uploader.join()
        renders = page_renders(base) - renders_before
        return {"binary": str(binary), "page_alone": alone, "page_beside_misses": beside, "list": lists,
                "uploads": uploader.statuses, "list_renders": renders, "memory_kib": server.memory()}
    finally:
        server.stop()


def median(runs: list[dict], key: str, field: str | None = None) -> float:
    return statistics.median(run[key][field] if field else run[key] for run in runs)


def summary_row(label: str, runs: list[dict]) -> str:
    uploads = statistics.median(sum(run["uploads"].values()) for run in runs)
    return (f"| {label} | {median(runs, 'page_alone', 'requests_per_second'):,.0f} | "
            f"{median(runs, 'page_alone', 'latency_p99_us') / 1000:.2f} ms | "
            f"{median(runs, 'page_beside_misses', 'requests_per_second'):,.0f} | "
            f"{median(runs, 'page_beside_misses', 'latency_p99_us') / 1000:.2f} ms | "
            f"{median(runs, 'list', 'requests_per_second'):,.0f} | {median(runs, 'list', 'latency_p99_us') / 1000:.2f} ms | "
            f"{median(runs, 'list_renders'):,.0f} | {uploads:,.0f} |")


def report_round(round_number: int, label: str, run: dict) -> None:
    print(f"  round {round_number + 1} {label:<10} page alone {run['page_alone']['requests_per_second']:>8,.0f} req/s "
          f"p99 {run['page_alone']['latency_p99_us'] / 1000:6.2f} ms | beside misses "
          f"{run['page_beside_misses']['requests_per_second']:>8,.0f} req/s p99 "
          f"{run['page_beside_misses']['latency_p99_us'] / 1000:6.2f} ms | list "
          f"{run['list']['requests_per_second']:>6,.0f} req/s p99 {run['list']['latency_p99_us'] / 1000:6.2f} ms, "
          f"{run['list_renders']} renders, uploads {run['uploads']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_admin_corpus_arguments(parser, duration=10)
    parser.add_argument("--reference", type=pathlib.Path, required=True, help="the build to compare with")
    parser.add_argument("--uploads", type=int, default=3000, help="distinct wheels each trial may upload")
    parser.add_argument("--upload-interval", type=float, default=0.05, help="seconds between uploads")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--page-connections", type=int, default=32)
    parser.add_argument("--miss-connections", type=int, default=4)
    args = parser.parse_args()
    work, data, summary, ingested = ingested_corpus(args)
    wheels = wheel_set(work, "miss-upload", args.uploads).read_text().split()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="pages-beside-misses-", dir=work))
    builds = {"this build": args.binary.resolve(), "reference": args.reference.resolve()}
    report = {"projects": args.projects, "wheels": summary["wheels"], "ingest": ingested, "page": PAGE, "list": LIST,
              "commit": run_text("git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"),
              "builds": {label: str(path) for label, path in builds.items()},
              "load_average_before": load_average(), "runs": {label: [] for label in builds}}
    try:
        for round_number in range(args.rounds):
            order = list(builds) if round_number % 2 == 0 else list(reversed(builds))
            for label in order:
                folder = fresh_data(scratch, f"{label.replace(' ', '-')}-{round_number}", data)
                run = measure(builds[label], folder, wheels, args, scratch, label)
                report["runs"][label].append(run)
                report_round(round_number, label, run)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_after"] = load_average()

    print(f"\n{args.projects:,} projects; {PAGE} with {args.page_connections} connections; beside it, an upload "
          f"every {args.upload_interval} s and {LIST} with {args.miss_connections} connections; medians of "
          f"{args.rounds} rounds\n")
    print("| build | page alone req/s | p99 | page beside misses req/s | p99 | list req/s | list p99 | list renders "
          "| uploads |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, runs in report["runs"].items():
        print(summary_row(label, runs))
    this, reference = report["runs"]["this build"], report["runs"]["reference"]
    ratio = (median(this, "page_beside_misses", "latency_p99_us") /
             median(reference, "page_beside_misses", "latency_p99_us"))
    throughput = (median(this, "page_beside_misses", "requests_per_second") /
                  median(reference, "page_beside_misses", "requests_per_second"))
    print(f"\nbeside the misses, this build / reference: p99 {ratio:.2f}x, req/s {throughput:.2f}x")
    print(f"load average {report['load_average_before']} -> {report['load_average_after']}")
    print(f"written: {save_results(report, f'pages-beside-misses-{args.projects}').relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
