"""The real binary's access log under concurrent load from curl and keep-alive HTTP clients: one
whole line per request, in a file and on standard output, all of them written by the time SIGTERM's
drain ends; lines that cannot be written counted in /metrics and said on stderr; a destination that
cannot be opened stops start-up with the fix."""

from __future__ import annotations

import collections
import datetime
import http.client
import re
import subprocess
import threading
import time
import urllib.request

from server_process import REPO_ROOT, ServerProcess

# `2026-11-24T23:47:36.123456Z 127.0.0.1 "GET /simple/" 200 1234 56us`, as the README documents it.
LINE = re.compile(r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})Z (\S+) "([A-Z]+) (\S+)" (\d{3}) (\d+) (\d+)us')


def target_of(client: str, i: int) -> str:
    """Page hits, 404s and /healthz: responses the server writes in different ways."""
    return ("/healthz", f"/simple/missing-{client}-{i}/", "/simple/")[i % 3]


def keep_alive_client(url: str, name: str, count: int, sent: collections.Counter, lock: threading.Lock) -> None:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    for i in range(count):
        connection.request("GET", target_of(name, i))
        response = connection.getresponse()
        response.read()
        with lock:
            sent[target_of(name, i)] += 1
    connection.close()


def curl_parallel(url: str, count: int, sent: collections.Counter, lock: threading.Lock, config_path) -> None:
    """One curl, 16 transfers at a time over reused connections."""
    targets = [target_of("curl", i) for i in range(count)]
    config_path.write_text("".join(f'url = "{url.rstrip("/")}{target}"\noutput = "/dev/null"\n' for target in targets))
    done = subprocess.run(["curl", "-s", "--parallel", "--parallel-max", "16", "-w", "%{http_code}\n", "-K",
                           str(config_path)], capture_output=True, text=True, timeout=120)
    codes = done.stdout.split()
    assert len(codes) == count and set(codes) <= {"200", "404"}, (done.returncode, done.stderr, codes[:20])
    with lock:
        sent.update(targets)


def concurrent_load(url: str, tmp_path, clients: int = 6, each: int = 300) -> collections.Counter:
    """Every target sent and answered, with how often."""
    sent: collections.Counter = collections.Counter()
    lock = threading.Lock()
    threads = [threading.Thread(target=keep_alive_client, args=(url, f"c{n}", each, sent, lock)) for n in range(clients)]
    threads.append(threading.Thread(target=curl_parallel, args=(url, 400, sent, lock, tmp_path / "curl.conf")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent


def check_lines(lines: list[str], sent: collections.Counter, started: datetime.datetime,
                ended: datetime.datetime) -> None:
    """Each line whole, one per request sent, stamped in UTC within the run."""
    seen: collections.Counter = collections.Counter()
    for line in lines:
        match = LINE.fullmatch(line)
        assert match, f"not one well-formed line: {line!r}"
        stamp = datetime.datetime.fromisoformat(match.group(1)).replace(tzinfo=datetime.timezone.utc)
        assert started <= stamp <= ended, line
        target, status = match.group(4), match.group(5)
        assert status == ("404" if target.startswith("/simple/missing-") else "200"), line
        seen[target] += 1
    assert seen == sent


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def requests_counted(url: str) -> int:
    with urllib.request.urlopen(url + "metrics", timeout=10) as response:
        page = response.read().decode()
    return sum(int(float(value)) for value in re.findall(r"^wheelhouse_http_requests_total\{[^}]*\} (\S+)$", page,
                                                           re.MULTILINE))


def test_a_file_gets_one_line_per_request_and_lines_match_metrics(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with ServerProcess(data) as server:
        started = utc_now().replace(microsecond=0)
        sent = concurrent_load(server.url, tmp_path)
        total = sum(sent.values())
        # A request is counted just after its last byte: scrape until every one is (each
        # scrape counts those before it, not itself).
        scrapes, deadline = 0, time.monotonic() + 10
        while True:
            counted = requests_counted(server.url)
            scrapes += 1
            if counted == total + scrapes - 1 or time.monotonic() > deadline:
                break
        assert counted == total + scrapes - 1
        assert server.stop() == 0
        ended = utc_now()
        lines = server.access_log.read_text().splitlines()  # at once: the drain wrote the tail
    metrics_lines = [line for line in lines if '"GET /metrics"' in line]
    assert len(metrics_lines) == scrapes
    assert len(lines) == total + scrapes
    check_lines([line for line in lines if '"GET /metrics"' not in line], sent, started, ended)


def test_standard_output_gets_one_line_per_request_and_nothing_else(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with ServerProcess(data, access_log="-") as server:
        started = utc_now().replace(microsecond=0)
        sent = concurrent_load(server.url, tmp_path)
        assert server.stop() == 0
        ended = utc_now()
        lines = server.stdout_path.read_text().splitlines()
    assert len(lines) == sum(sent.values())
    check_lines(lines, sent, started, ended)


def test_lines_that_cannot_be_written_are_counted_and_said(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with ServerProcess(data, access_log="/dev/full") as server:  # every write fails: No space left on device
        for _ in range(20):
            with server.get("/healthz") as response:
                assert response.status == 200
        deadline = time.monotonic() + 10  # the writer's next round, within a second
        lost = 0
        while lost < 20 and time.monotonic() < deadline:
            with server.get("/metrics") as response:
                page = response.read().decode()
            lost = int(float(re.search(r"^wheelhouse_access_log_lines_lost_total (\S+)$", page, re.MULTILINE).group(1)))
        assert lost >= 20  # and the scrapes, in the round that wrote them
        assert server.stop() == 0
        assert "access log: cannot write to /dev/full (No space left on device)" in server.stderr()
        assert "wheelhouse_access_log_lines_lost_total" in server.stderr()


def test_an_access_log_that_cannot_be_opened_stops_start_up_with_the_fix(tmp_path, wheelhouse_bin):
    (tmp_path / "a-file").write_text("not a folder")
    done = subprocess.run([str(wheelhouse_bin), "serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "data"),
                           "--access-log", str(tmp_path / "a-file" / "access.log")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done.stderr
    assert "give --access-log a file this user may append to, '-' for standard output or 'off': cannot open" in done.stderr
    assert "(Not a directory)" in done.stderr
    assert "listening on" not in done.stderr


def test_copytruncate_rotation_keeps_writing_at_the_start_of_the_file(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with ServerProcess(data) as server:
        for _ in range(30):
            with server.get("/healthz"):
                pass
        deadline = time.monotonic() + 10  # the writer's next round, within a second
        while len(server.access_log.read_bytes().splitlines()) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.access_log.read_bytes().splitlines()) == 30
        rotated = tmp_path / "access.log.1"
        rotated.write_bytes(server.access_log.read_bytes())  # what logrotate's copytruncate does
        with open(server.access_log, "r+b") as log:
            log.truncate(0)
        for _ in range(5):
            with server.get("/simple/"):
                pass
        assert server.stop() == 0
        after = server.access_log.read_bytes()
    assert b"\0" not in after  # appended at the new end, not at the old offset past a hole
    assert len(after.splitlines()) == 5 and all(b'"GET /simple/" 200' in line for line in after.splitlines())
    assert len(rotated.read_bytes().splitlines()) == 30


def test_the_readme_shows_the_format_written():
    readme = (REPO_ROOT / "README.md").read_text()
    shown = re.search(r"The access log is one line a request.*?```\n(.*?)\n```", readme, re.DOTALL)
    assert shown, "README.md no longer shows an access-log line"
    assert LINE.fullmatch(shown.group(1)), shown.group(1)
