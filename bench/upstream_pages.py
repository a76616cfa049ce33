#!/usr/bin/python3
"""Upstream pages (issue 26), in one run:

  1. single flight: --clients clients (default 100) ask at once for one page this index has never
     fetched; the stand-in upstream's access log counts the requests wheelhouse made for it
     (the answer must be exactly one);
  2. a cached upstream page against nginx serving the same bytes: wheelhouse's copy of the page
     (JSON for pip's Accept, HTML for text/html) is written where a plain nginx serves it as a
     static file, then wrk loads each server in turn (--rounds times, the median kept).

The upstream is the e2e tests' stand-in (tests/e2e/upstream_standins.py): Debian's nginx over
HTTPS on loopback with a throwaway CA, serving a PEP 691 JSON page of --files entries (as PyPI
writes them; the files themselves are never fetched here). Everything listens on 127.0.0.1.

    /usr/bin/python3 bench/upstream_pages.py --files 500 --duration 5 --rounds 2

Prints a Markdown table and writes it with every raw figure to bench/results/.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import http.client
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from simple_pages import FORMATS, Nginx, Wheelhouse, check_nginx_serves_same_bytes, mirror_pages, run_wrk, \
    save_results  # noqa: E402
from upstream_standins import IndexTree, NginxUpstreams  # noqa: E402

PROJECT = "bigpkg"


def upstream_tree(root: pathlib.Path, files: int) -> IndexTree:
    """A PyPI-like page of `files` wheels of PROJECT (entries only: no bytes are ever fetched)."""
    tree = IndexTree(root, "json")
    entries = []
    for i in range(files):
        name = f"{PROJECT}-1.{i}-cp312-cp312-manylinux_2_28_x86_64.whl"
        digest = hashlib.sha256(name.encode()).hexdigest()
        entries.append({"filename": name, "url": f"/packages/{name}", "sha256": digest, "size": 1000 + i,
                        "requires_python": ">=3.9", "yanked": None, "metadata_sha256": digest})
    tree.projects[PROJECT] = entries
    return tree


def get(port: int, path: str, accept: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path, headers={"Accept": accept})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def single_flight(port: int, upstreams: NginxUpstreams, clients: int) -> dict:
    page = f"/simple/{PROJECT}/"
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        answers = list(pool.map(lambda _: get(port, page, FORMATS["json"]), range(clients)))
    asked = [line for line in upstreams.requests("pypi") if line.startswith(f"GET {page} ")]
    return {"clients": clients, "statuses": sorted({status for status, _ in answers}),
            "distinct_bodies": len({body for _, body in answers}), "upstream_requests": len(asked)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=500, help="entries on the upstream page (default 500)")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--duration", type=int, default=5, help="seconds of each wrk run (default 5)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2, help="wheelhouse --threads and nginx workers")
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--nice", type=int, default=0)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build" / "release" / "server" / "wheelhouse")
    parser.add_argument("--results-dir", type=pathlib.Path, default=BENCH_DIR / "results")
    args = parser.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="upstream-bench-"))
    upstreams = NginxUpstreams(work / "upstream", {"pypi": upstream_tree(work / "pypi", args.files)}).start()
    server = Wheelhouse(args.binary, work / "data", args.threads, work / "wheelhouse.log", args.nice)
    server.command += [*upstreams.flags(), "--upstream-max-age", "3600"]
    nginx = None
    try:
        server.start()
        flight = single_flight(server.port, upstreams, args.clients)
        page = f"/simple/{PROJECT}/"
        sites = mirror_pages(server.port, [page], list(FORMATS), work / "static")
        nginx = Nginx(work / "nginx", args.threads, sites, args.nice)
        nginx.start()
        check_nginx_serves_same_bytes(sites, [page])
        rows = []
        for page_format, accept in FORMATS.items():
            figures = {"wheelhouse": [], "nginx": []}
            for _ in range(args.rounds):
                for name, port in (("wheelhouse", server.port), ("nginx", sites[page_format]["port"])):
                    run = run_wrk(f"http://127.0.0.1:{port}{page}", accept, args, args.duration, None)
                    figures[name].append(run["requests_per_second"])
            ours, theirs = statistics.median(figures["wheelhouse"]), statistics.median(figures["nginx"])
            rows.append({"format": page_format, "bytes": sites[page_format]["bytes"], "wheelhouse_rps": ours,
                         "nginx_rps": theirs, "ratio": ours / theirs, "runs": figures})
    finally:
        if nginx:
            nginx.stop()
        server.stop()
        upstreams.stop()

    print(f"single flight: {flight['clients']} clients missing {PROJECT}'s page -> "
          f"{flight['upstream_requests']} upstream request(s); statuses {flight['statuses']}, "
          f"{flight['distinct_bodies']} distinct body")
    print("\n| format | page bytes | wheelhouse req/s | nginx req/s | ratio |\n| --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['format']} | {row['bytes']:,} | {row['wheelhouse_rps']:,.0f} | {row['nginx_rps']:,.0f} | "
              f"{row['ratio']:.2f}x |")
    saved = save_results({"args": {k: str(v) for k, v in vars(args).items()}, "single_flight": flight, "pages": rows},
                         "upstream_pages", args.results_dir)
    print(f"\nraw figures: {saved}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
