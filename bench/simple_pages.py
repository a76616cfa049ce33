#!/usr/bin/python3
"""Read-path benchmark of the simple API, measured against nginx in the same run.

Generates (or reuses) a corpus of real wheels, ingests it with `wheelhouse ingest`, starts
`wheelhouse serve`, fetches every page the load will ask for and writes those exact bytes as
static files for an nginx started beside it, then runs wrk against both, alternately, for each
scenario: the project list (/simple/), one project page, a random mix of every project page, and
the same mix in one variant index (/variants/cu128/simple/<project>/),
in JSON (pip's Accept header) and in HTML. Everything listens on 127.0.0.1 only, and every load
is bounded by --duration.

    /usr/bin/python3 bench/simple_pages.py --projects 200 --wheels-per-project 25
    /usr/bin/python3 bench/simple_pages.py --projects 2000 --wheels-per-project 50

Prints a Markdown table and writes it with every raw figure to bench/results/.
"""

from __future__ import annotations

import argparse
import copy
import contextlib
import http.client
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
import make_corpus  # noqa: E402

PIP_ACCEPT = ("application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, "
              "text/html; q=0.01")
# What a browser or an HTML-only client sends; the page is the same PEP 503 HTML pip gets.
HTML_ACCEPT = "text/html"
FORMATS = {"json": PIP_ACCEPT, "html": HTML_ACCEPT}
# The project pinned for the one-project scenario: the index is built for wheels like its own.
PINNED_PROJECT = "flash-attn"


# ----------------------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
    return values


def cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU time a process (all its threads) has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    # Fields 14 and 15 of stat(5) (utime, stime); the split starts at field 3.
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rpartition(")")[2].split()[1]) == pid:
                    found.append(int(entry))
    return found


def save_results(report: dict, name: str, folder: pathlib.Path = BENCH_DIR / "results") -> pathlib.Path:
    """Writes every raw figure of a run to <folder>/<name>-<time>.json (bench/results/ is not committed)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=1))
    return out


def load_average() -> list[float]:
    return [float(value) for value in pathlib.Path("/proc/loadavg").read_text().split()[:3]]


def at_priority(nice: int):
    """A preexec_fn that gives the child (and the threads and processes it starts) this nice value."""
    return lambda: os.setpriority(os.PRIO_PROCESS, 0, nice)


def run_text(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    return (done.stdout + done.stderr).strip()


# ----------------------------------------------------------------------------- wrk

UNIT_MICROSECONDS = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0, "m": 60_000_000.0}


def parse_duration_us(text: str) -> float:
    match = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"wrk printed a latency we cannot read: {text!r}")
    return float(match.group(1)) * UNIT_MICROSECONDS[match.group(2)]


def parse_wrk(output: str) -> dict:
    """req/s, average and p50/p90/p99 latency (µs), request count and errors from wrk --latency."""
    result: dict = {"non_2xx_3xx": 0, "socket_errors": {}}
    for line in output.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "Requests/sec:":
            result["requests_per_second"] = float(words[1])
        elif words[0] == "Latency" and len(words) >= 5:
            result["latency_avg_us"] = parse_duration_us(words[1])
            result["latency_stdev_us"] = parse_duration_us(words[2])
            result["latency_max_us"] = parse_duration_us(words[3])
        elif re.fullmatch(r"(50|75|90|99)%", words[0]) and len(words) == 2:
            result[f"latency_p{words[0][:-1]}_us"] = parse_duration_us(words[1])
        elif len(words) > 3 and words[1] == "requests" and words[2] == "in":
            result["requests"] = int(words[0])
        elif line.strip().startswith("Non-2xx or 3xx responses:"):
            result["non_2xx_3xx"] = int(words[-1])
        elif line.strip().startswith("Socket errors:"):
            result["socket_errors"] = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", line.split(":", 1)[1])}
    missing = [key for key in ("requests_per_second", "latency_avg_us", "latency_p99_us") if key not in result]
    if missing:
        raise RuntimeError(f"wrk output lacks {missing}:\n{output}")
    return result


MIX_SCRIPT = """-- Each request asks for a page drawn at random from the list, one seed per wrk thread.
local requests = {}
local counter = 0

function setup(thread)
  thread:set("thread_number", counter)
  counter = counter + 1
end

function init(args)
  math.randomseed(20250101 + thread_number)
  -- Formatting once up front keeps Lua out of the measured loop (wrk.headers holds -H).
  for path in io.lines(%(path_file)s) do
    requests[#requests + 1] = wrk.format("GET", path)
  end
end

function request()
  return requests[math.random(#requests)]
end
"""


def run_wrk(url: str, accept: str, args: argparse.Namespace, duration: int, script: pathlib.Path | None,
            headers: tuple[str, ...] = ()) -> dict:
    command = ["wrk", f"-t{args.wrk_threads}", f"-c{args.connections}", f"-d{duration}s", "--latency",
               "-H", f"Accept: {accept}"]
    for header in headers:
        command += ["-H", header]
    if script:
        command += ["-s", str(script)]
    command.append(url)
    # wrk stops by itself after -d; the timeout only guards against a wedged wrk.
    done = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60,
                          preexec_fn=at_priority(args.nice))
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    parsed = parse_wrk(done.stdout)
    parsed["command"] = command
    return parsed


# ----------------------------------------------------------------------------- the servers


class Wheelhouse:
    """`wheelhouse serve` on a free loopback port, timed from exec to its listening line."""

    def __init__(self, binary: pathlib.Path, data: pathlib.Path, threads: int, log_path: pathlib.Path, nice: int,
                 access_log: str = "off", stdout_path: pathlib.Path | None = None):
        self.command = [str(binary), "serve", "--listen", "127.0.0.1:0", "--data", str(data), "--threads",
                        str(threads), "--access-log", access_log]
        self.log_path = log_path
        self.stdout_path = stdout_path  # where standard output (an access log of "-") goes; else nowhere
        self.nice = nice
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.startup_listening_s = 0.0
        self.startup_first_page_s = 0.0

    def start(self, timeout: float = 60.0) -> None:
        started = time.monotonic()
        stdout = open(self.stdout_path, "wb") if self.stdout_path else subprocess.DEVNULL
        self.process = subprocess.Popen(self.command, stdout=stdout, stderr=subprocess.PIPE,
                                        preexec_fn=at_priority(self.nice))
        if self.stdout_path:
            stdout.close()  # the server holds its own copy
        log = open(self.log_path, "wb")
        deadline = started + timeout
        while True:
            line = self.process.stderr.readline()
            if not line:
                log.close()
                raise RuntimeError(f"wheelhouse serve exited ({self.process.wait()}): {self.log_path.read_text()}")
            log.write(line)
            match = re.search(rb"listening on https?://127\.0\.0\.1:(\d+)/", line)
            if match:
                self.startup_listening_s = time.monotonic() - started
                self.port = int(match.group(1))
                break
            if time.monotonic() > deadline:
                raise RuntimeError("wheelhouse serve printed no listening line")

        def keep_draining() -> None:
            with log:
                for rest in self.process.stderr:
                    log.write(rest)
                    log.flush()

        threading.Thread(target=keep_draining, daemon=True).start()
        while True:
            with contextlib.suppress(OSError):
                if "--tls-cert" in self.command:  # the bench's own certificate: nothing to verify
                    connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=5,
                                                             context=ssl._create_unverified_context())
                else:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                connection.request("GET", "/simple/", headers={"Accept": PIP_ACCEPT})
                response = connection.getresponse()
                response.read()
                connection.close()
                if response.status == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("wheelhouse serve never answered /simple/ with 200")
            time.sleep(0.002)
        self.startup_first_page_s = time.monotonic() - started

    def stop(self) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def memory(self) -> dict[str, int]:
        return proc_status(self.process.pid)

    def cpu(self) -> tuple[float, float]:
        return cpu_seconds(self.process.pid)


NGINX_CONF = """# Written by bench/simple_pages.py: static copies of wheelhouse's pages, tuned as a
# production nginx for small static files would be.
worker_processes {workers};
daemon off;
master_process on;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{
    worker_connections 4096;
}}
http {{
    {access_log}
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65s;
    # wrk keeps its connections open; nginx's default of 1000 requests would close them.
    keepalive_requests 10000000;
    open_file_cache max=100000 inactive=120s;
    open_file_cache_valid 120s;
    open_file_cache_errors on;
    client_body_temp_path {prefix}/temp/client_body;
    proxy_temp_path {prefix}/temp/proxy;
    fastcgi_temp_path {prefix}/temp/fastcgi;
    uwsgi_temp_path {prefix}/temp/uwsgi;
    scgi_temp_path {prefix}/temp/scgi;
{servers}
}}
"""

NGINX_SERVER = """    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.{extension};
        types {{ }}
        default_type "{content_type}";
        # The same caching headers wheelhouse sends, so both answers carry alike headers.
        add_header Cache-Control "{cache_control}";
        add_header Vary "Accept, User-Agent";
    }}
"""


class Nginx:
    """nginx in the foreground with its own prefix: one loopback port per page format."""

    def __init__(self, prefix: pathlib.Path, workers: int, sites: dict[str, dict], nice: int,
                 access_log: str = "access_log off;"):
        self.prefix = prefix
        self.nice = nice
        self.workers = workers
        self.access_log = access_log  # the http block's logging directives
        self.sites = sites  # format -> {root, extension, content_type, cache_control, port}
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 10.0) -> None:
        for folder in ("temp", "logs"):
            (self.prefix / folder).mkdir(parents=True, exist_ok=True)
        servers = "".join(NGINX_SERVER.format(**site) for site in self.sites.values())
        conf = self.prefix / "nginx.conf"
        conf.write_text(NGINX_CONF.format(workers=self.workers, prefix=self.prefix, servers=servers,
                                          access_log=self.access_log))
        command = ["nginx", "-p", str(self.prefix), "-c", str(conf), "-e", str(self.prefix / "error.log")]
        # Running as root, nginx's workers would switch to nobody, who may not read the roots.
        if os.geteuid() == 0:
            command += ["-g", "user root;"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        preexec_fn=at_priority(self.nice))
        deadline = time.monotonic() + timeout
        for site in self.sites.values():
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", site["port"]), 0.2):
                    break
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nginx did not start: {self.process.stderr.read().decode(errors='replace')}")
                time.sleep(0.01)
        while len(self.worker_pids()) < self.workers and time.monotonic() < deadline:
            time.sleep(0.01)

    def worker_pids(self) -> list[int]:
        return children_of(self.process.pid)

    def memory(self) -> dict[str, int]:
        """Master and workers together, in KiB."""
        total = {"VmRSS": 0, "VmHWM": 0}
        for pid in [self.process.pid, *self.worker_pids()]:
            for key, value in proc_status(pid).items():
                total[key] += value
        return total

    def cpu(self) -> tuple[float, float]:
        times = [cpu_seconds(pid) for pid in [self.process.pid, *self.worker_pids()]]
        return sum(user for user, _ in times), sum(system for _, system in times)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)  # fast shutdown
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ----------------------------------------------------------------------------- steps


def add_admin_corpus_arguments(parser: argparse.ArgumentParser, duration: int) -> None:
    """The options of the benches over a 10,000-project admin corpus (admin_projects.py,
    pages_beside_admin.py, pages_beside_misses.py)."""
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--projects", type=int, default=10_000)
    parser.add_argument("--wheels-per-project", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--payload-bytes", type=int, default=256)
    parser.add_argument("--duration", type=int, default=duration, help="seconds per wrk run")
    parser.add_argument("--threads", type=int, default=2, help="server I/O threads")
    parser.add_argument("--work-dir", type=pathlib.Path, default=REPO_ROOT / "build/bench")
    parser.add_argument("--reuse-data", action="store_true", help="keep the ingested data folder for the next run")
    parser.add_argument("--ingest-jobs", type=int, default=None)


def ingested_corpus(args: argparse.Namespace) -> tuple[pathlib.Path, pathlib.Path, dict, dict]:
    """(work folder, ingested data folder, corpus summary, ingest report) for
    add_admin_corpus_arguments' options."""
    args.nice, args.wrk_threads = 0, 1
    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus, summary = prepare_corpus(args, work)
    data = work / f"data-{corpus.name}"
    return work, data, summary, ingest(args, corpus, summary, data)


def with_connections(args: argparse.Namespace, connections: int) -> argparse.Namespace:
    changed = copy.copy(args)
    changed.connections = connections
    return changed


def prepare_corpus(args: argparse.Namespace, work: pathlib.Path) -> tuple[pathlib.Path, dict]:
    wanted = make_corpus.corpus_parameters(args.projects, args.wheels_per_project, args.seed, args.payload_bytes)
    folder = work / f"corpus-{args.projects}x{args.wheels_per_project}-seed{args.seed}-{args.payload_bytes}b"
    marker = folder / make_corpus.COMPLETE_MARKER
    if marker.exists():
        summary = json.loads(marker.read_text())
        if all(summary.get(key) == value for key, value in wanted.items()):
            print(f"corpus: reusing {folder} ({summary['wheels']} wheels)")
            summary["reused"] = True
            return folder, summary
    if folder.exists():
        shutil.rmtree(folder)  # an interrupted or outdated corpus
    print(f"corpus: generating {args.projects} x {args.wheels_per_project} wheels into {folder} ...", flush=True)
    summary = make_corpus.make_corpus(folder, args.projects, args.wheels_per_project, args.seed, args.payload_bytes)
    summary["reused"] = False
    print(f"corpus: {summary['wheels']} wheels, {summary['bytes'] / 1e6:.1f} MB in {summary['seconds']} s")
    return folder, summary


def ingest(args: argparse.Namespace, corpus: pathlib.Path, summary: dict, data: pathlib.Path) -> dict:
    marker = data / "bench-ingest.json"
    if args.reuse_data and marker.exists():
        recorded = json.loads(marker.read_text())
        if recorded.get("corpus") == str(corpus):
            print(f"ingest: reusing {data} (ingested earlier at {recorded['wheels_per_second']:.0f} wheels/s)")
            return {**recorded, "reused": True}
    if data.exists():
        shutil.rmtree(data)
    command = [str(args.binary), "ingest", "--data", str(data), str(corpus)]
    if args.ingest_jobs:
        command[2:2] = ["--jobs", str(args.ingest_jobs)]
    print(f"ingest: {' '.join(command)}", flush=True)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - started
    added = re.search(r"added\s+(\d+)", done.stdout)
    if done.returncode != 0 or not added or int(added.group(1)) != summary["wheels"]:
        raise RuntimeError(f"ingest did not add all {summary['wheels']} wheels ({done.returncode}):\n"
                           f"{done.stdout}{done.stderr}")
    database_bytes = sum(path.stat().st_size for path in data.glob("catalog.db*"))
    result = {"corpus": str(corpus), "wheels": summary["wheels"], "seconds": round(seconds, 2),
              "wheels_per_second": summary["wheels"] / seconds, "jobs": args.ingest_jobs or os.cpu_count(),
              "catalog_bytes": database_bytes, "reused": False}
    marker.write_text(json.dumps(result, indent=1))
    print(f"ingest: {summary['wheels']} wheels in {seconds:.1f} s = {result['wheels_per_second']:.0f} wheels/s, "
          f"catalog {database_bytes / 1e6:.1f} MB")
    return result


def scenario_paths(projects: list[str], selector: str) -> dict[str, list[str]]:
    pinned = PINNED_PROJECT if PINNED_PROJECT in projects else projects[0]
    return {
        "index": ["/simple/"],
        "project": [f"/simple/{pinned}/"],
        "mix": [f"/simple/{project}/" for project in projects],
        # Every project's page in one variant index: its best fits and pure files, from the cache.
        "variant": [f"/variants/{selector}/simple/{project}/" for project in projects],
    }


def mirror_pages(port: int, paths: list[str], formats: list[str], roots: pathlib.Path) -> dict[str, dict]:
    """Fetches every page in each format from wheelhouse and writes it where nginx serves it.
    Returns, per format, the headers nginx must send alike and the bytes written."""
    sites = {}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for page_format in formats:
        root = roots / page_format
        extension = page_format
        content_type = cache_control = None
        total = 0
        for path in paths:
            connection.request("GET", path, headers={"Accept": FORMATS[page_format]})
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"wheelhouse answered {response.status} to GET {path}: {body[:300]!r}")
            this_type = response.getheader("Content-Type")
            if content_type not in (None, this_type):
                raise RuntimeError(f"{path} came as {this_type}, other pages as {content_type}")
            content_type, cache_control = this_type, response.getheader("Cache-Control")
            target = root / path.lstrip("/") / f"index.{extension}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
            total += len(body)
        sites[page_format] = {"root": str(root), "extension": extension, "content_type": content_type,
                              "cache_control": cache_control, "bytes": total, "port": free_port()}
    connection.close()
    return sites


def check_nginx_serves_same_bytes(sites: dict[str, dict], paths: list[str]) -> None:
    """Every page through nginx is byte for byte the file written (and warms its file cache)."""
    for page_format, site in sites.items():
        connection = http.client.HTTPConnection("127.0.0.1", site["port"], timeout=30)
        for path in paths:
            connection.request("GET", path, headers={"Accept": FORMATS[page_format]})
            response = connection.getresponse()
            body = response.read()
            expected = (pathlib.Path(site["root"]) / path.lstrip("/") / f"index.{site['extension']}").read_bytes()
            if response.status != 200 or body != expected:
                raise RuntimeError(f"nginx answered {response.status} to {path} with other bytes than wheelhouse's")
            if response.getheader("Content-Type") != site["content_type"]:
                raise RuntimeError(f"nginx sends {response.getheader('Content-Type')} for {path}, "
                                   f"wheelhouse {site['content_type']}")
        connection.close()


def format_us(value: float) -> str:
    return f"{value / 1000:.2f} ms"


def markdown_table(rows: list[dict]) -> str:
    lines = [
        "| scenario | nginx req/s | wheelhouse req/s | ratio | nginx p99 | wheelhouse p99 | "
        "nginx req/CPU-s | wheelhouse req/CPU-s | wheelhouse RSS (HWM) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['scenario']} | {row['nginx']['requests_per_second']:,.0f} | "
            f"{row['wheelhouse']['requests_per_second']:,.0f} | {row['ratio']:.2f} | "
            f"{format_us(row['nginx']['latency_p99_us'])} | {format_us(row['wheelhouse']['latency_p99_us'])} | "
            f"{row['nginx']['requests_per_cpu_second']:,.0f} | {row['wheelhouse']['requests_per_cpu_second']:,.0f} | "
            f"{row['wheelhouse_rss_kib'] / 1024:.1f} MB ({row['wheelhouse_hwm_kib'] / 1024:.1f} MB) |")
    return "\n".join(lines)


def median_run(runs: list[dict]) -> dict:
    """The run with the median req/s (the upper middle one for an even count), so its latency
    figures belong to the same run as its rate."""
    ordered = sorted(runs, key=lambda run: run["requests_per_second"])
    return ordered[len(ordered) // 2]


def benchmark(args: argparse.Namespace) -> dict:
    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus, corpus_summary = prepare_corpus(args, work)
    projects = corpus_summary["project_names"]
    data = work / f"data-{corpus.name}"
    ingest_result = ingest(args, corpus, corpus_summary, data)

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="simple-pages-", dir=work))
    server = Wheelhouse(args.binary, data, args.threads, scratch / "wheelhouse-stderr.log", args.nice)
    nginx = None
    report: dict = {
        "setup": {
            "projects": args.projects, "wheels_per_project": args.wheels_per_project,
            "wheels": corpus_summary["wheels"], "server_threads": args.threads, "nginx_workers": args.threads,
            "wrk_threads": args.wrk_threads, "connections": args.connections, "duration_s": args.duration,
            "rounds": args.rounds, "nice": args.nice, "cores": os.cpu_count(), "nginx": run_text("nginx", "-v"),
            "wrk": run_text("wrk", "--version").splitlines()[0],
            "commit": run_text("git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"),
            "binary": str(args.binary), "load_average_before": load_average(),
        },
        "corpus": {key: value for key, value in corpus_summary.items() if key != "project_names"},
        "ingest": ingest_result,
    }
    try:
        server.start()
        report["startup"] = {"listening_s": server.startup_listening_s, "first_200_s": server.startup_first_page_s,
                             "rss_kib_after_start": server.memory()["VmRSS"]}
        print(f"serve: listening after {server.startup_listening_s * 1000:.0f} ms, first 200 on /simple/ after "
              f"{server.startup_first_page_s * 1000:.0f} ms, RSS {server.memory()['VmRSS'] / 1024:.1f} MB")

        paths = scenario_paths(projects, args.variant_selector)
        scripts = {}  # the scenarios that draw a page at random for each request
        for scenario in ("mix", "variant"):
            path_file = scratch / f"{scenario}-paths.txt"
            path_file.write_text("".join(path + "\n" for path in paths[scenario]))
            scripts[scenario] = scratch / f"{scenario}.lua"
            scripts[scenario].write_text(MIX_SCRIPT % {"path_file": json.dumps(str(path_file))})
        mix_script = scripts["mix"]
        every_page = ["/simple/"] + paths["mix"] + paths["variant"]

        sites = mirror_pages(server.port, every_page, args.formats, scratch / "roots")
        report["pages"] = {fmt: {"content_type": site["content_type"], "bytes": site["bytes"],
                                 "index_bytes": (pathlib.Path(site["root"]) / "simple" /
                                                 f"index.{site['extension']}").stat().st_size}
                           for fmt, site in sites.items()}
        report["rss_kib_after_fetching_every_page"] = server.memory()["VmRSS"]
        nginx = Nginx(scratch / "nginx", args.threads, sites, args.nice)
        nginx.start()
        check_nginx_serves_same_bytes(sites, every_page)

        targets = {"nginx": lambda fmt: sites[fmt]["port"], "wheelhouse": lambda fmt: server.port}
        meters = {"nginx": nginx, "wheelhouse": server}
        for page_format in args.formats:  # warm both: connections, caches, page-ins
            for name in ("nginx", "wheelhouse"):
                run_wrk(f"http://127.0.0.1:{targets[name](page_format)}/", FORMATS[page_format], args,
                        args.warmup, mix_script)

        rows = []
        for page_format in args.formats:
            for scenario in ("index", "project", "mix", "variant"):
                label = f"{scenario} ({page_format})" if scenario != "project" else \
                    f"project {paths['project'][0]} ({page_format})"
                runs: dict[str, list[dict]] = {"nginx": [], "wheelhouse": []}
                for round_number in range(args.rounds):
                    # Alternate who goes first, so neither always runs on a warmer or quieter machine.
                    order = ("nginx", "wheelhouse") if round_number % 2 == 0 else ("wheelhouse", "nginx")
                    for name in order:
                        url = f"http://127.0.0.1:{targets[name](page_format)}"
                        url += "/" if scenario in scripts else paths[scenario][0]
                        cpu_before = meters[name].cpu()
                        run = run_wrk(url, FORMATS[page_format], args, args.duration,
                                      scripts.get(scenario))
                        cpu_after = meters[name].cpu()
                        run["cpu_user_seconds"] = cpu_after[0] - cpu_before[0]
                        run["cpu_system_seconds"] = cpu_after[1] - cpu_before[1]
                        run["cpu_seconds"] = run["cpu_user_seconds"] + run["cpu_system_seconds"]
                        run["requests_per_cpu_second"] = run.get("requests", 0) / max(run["cpu_seconds"], 1e-9)
                        run["memory_kib"] = meters[name].memory()
                        run["load_average_after"] = load_average()
                        runs[name].append(run)
                        bad = run["non_2xx_3xx"] + sum(run["socket_errors"].values())
                        print(f"  {label:<40} {name:<10} {run['requests_per_second']:>10,.0f} req/s  "
                              f"p99 {format_us(run['latency_p99_us']):>9}  "
                              f"{run['requests_per_cpu_second']:>8,.0f} req/CPU-s "
                              f"({run['cpu_user_seconds'] / max(run['cpu_seconds'], 1e-9):.0%} user)  "
                              f"RSS {run['memory_kib']['VmRSS'] / 1024:6.1f} MB" +
                              (f"  ({bad} errors or non-2xx)" if bad else ""), flush=True)
                nginx_run, wheelhouse_run = median_run(runs["nginx"]), median_run(runs["wheelhouse"])
                rows.append({
                    "scenario": label, "paths": len(paths[scenario]), "nginx": nginx_run,
                    "wheelhouse": wheelhouse_run,
                    "ratio": wheelhouse_run["requests_per_second"] / nginx_run["requests_per_second"],
                    "wheelhouse_rss_kib": wheelhouse_run["memory_kib"]["VmRSS"],
                    "wheelhouse_hwm_kib": wheelhouse_run["memory_kib"]["VmHWM"],
                    "all_runs": runs,
                })
        report["rows"] = rows
        report["memory_end"] = {"wheelhouse": server.memory(), "nginx": nginx.memory()}
        report["setup"]["load_average_after"] = load_average()
        report["table"] = markdown_table(rows)
    finally:
        if nginx:
            nginx.stop()
        exit_code = server.stop()
        report["wheelhouse_exit_code"] = exit_code
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
            if not args.reuse_data:
                shutil.rmtree(data, ignore_errors=True)
        else:
            print(f"kept {scratch} and {data}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--wheels-per-project", type=int, default=25)
    parser.add_argument("--duration", type=int, default=10, help="seconds of each wrk run (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up per server and format")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2,
                        help="wheelhouse serve --threads, and nginx worker_processes (default 2)")
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs per server and scenario; the table shows the median run")
    parser.add_argument("--nice", type=int, default=0,
                        help="nice value for wrk and both servers alike; below 0 (as root) shields the "
                             "measurement from other work on the machine")
    parser.add_argument("--formats", default="json,html", help="page formats to load: json (pip's Accept), html")
    parser.add_argument("--variant-selector", default="cu128",
                        help="the variant index of the 'variant' scenario (every project's page in it)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--payload-bytes", type=int, default=2048)
    parser.add_argument("--ingest-jobs", type=int, default=0, help="wheelhouse ingest --jobs (default: its own)")
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build" / "release" / "server" / "wheelhouse")
    parser.add_argument("--work-dir", type=pathlib.Path, default=REPO_ROOT / "build" / "bench",
                        help="corpora are cached here; data and nginx files live here during a run")
    parser.add_argument("--results-dir", type=pathlib.Path, default=BENCH_DIR / "results")
    parser.add_argument("--reuse-data", action="store_true",
                        help="keep the ingested data folder and reuse it next time instead of ingesting again")
    parser.add_argument("--keep", action="store_true", help="keep the data folder, nginx root and logs")
    args = parser.parse_args()
    args.formats = [value.strip() for value in args.formats.split(",") if value.strip()]
    if unknown := [value for value in args.formats if value not in FORMATS]:
        parser.error(f"unknown formats {unknown}; use json and/or html")
    if args.connections < args.wrk_threads:
        parser.error("--connections must be at least --wrk-threads")
    if not args.binary.exists():
        parser.error(f"{args.binary} does not exist; build it with "
                     "`cmake --preset release && cmake --build --preset release --target wheelhouse`")
    for tool in ("wrk", "nginx"):
        if not shutil.which(tool):
            parser.error(f"{tool} is not on PATH (Debian: apt-get install {tool} nginx-light)")

    report = benchmark(args)
    out = save_results(report, f"simple-pages-{args.projects}x{args.wheels_per_project}", args.results_dir)
    setup = report["setup"]
    print()
    print(f"{setup['wheels']:,} wheels ({args.projects} projects x {args.wheels_per_project}); "
          f"wheelhouse --threads {setup['server_threads']}, nginx worker_processes {setup['nginx_workers']}, "
          f"wrk -t{setup['wrk_threads']} -c{setup['connections']} -d{setup['duration_s']:g}s, nice {setup['nice']}, "
          f"{setup['cores']} cores shared by all; load average {setup['load_average_before'][0]:.1f} before, "
          f"{setup['load_average_after'][0]:.1f} after")
    ingest_result = report["ingest"]
    print(f"ingest {ingest_result['wheels_per_second']:.0f} wheels/s; start-up {report['startup']['listening_s'] * 1000:.0f} ms "
          f"to listening, {report['startup']['first_200_s'] * 1000:.0f} ms to first 200 on /simple/")
    print()
    print(report["table"])
    print()
    print(f"results: {out}")


if __name__ == "__main__":
    main()
