#!/usr/bin/python3
"""What a PEP 825 variant.json costs as it grows (issue 24, item 3), against a reference binary
in the same run.

For each binary and each size n, 2n, 4n, … (values in the wheel's variant.json), a fresh data
folder and server: --projects variant wheels, one project each, uploaded by
`PUT /api/v1/files/<name>` (timed from the first byte sent to the answer), then the anonymous
reads that used to parse the stored properties again: `GET /api/v1/projects/<p>/variants`,
`GET /api/v1/projects/<p>` (--reads each) and one new variant index page per selector (each its
first render). The table shows the best of each figure's repeats (the results file has medians
too): the least disturbed by whatever else the machine runs. The values
sit where an attacker would put them: an `nvidia :: sm_arch` list (at most 128 here, the
per-feature limit) and the rest in lists of 128 in other namespaces; past this build's limits
the upload is refused, and that refusal is what is timed.

Prints a Markdown table with each figure's ratio to the size before it, and, whole, to
bench/results/. Exits 1 when, for the binary under test, doubling n more than triples the upload
or a read (at sizes where each takes at least --floor-ms, so that noise is not judged).

    /usr/bin/python3 bench/variant_json_cost.py --reference /work/ref/wheelhouse-3603e40
    /usr/bin/python3 bench/variant_json_cost.py --sizes 256 512 1024 2048 4096 8192
"""

from __future__ import annotations

import argparse
import http.client
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from simple_pages import BENCH_DIR, REPO_ROOT, Wheelhouse, load_average, save_results

sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
import wheelbuilder  # noqa: E402

SCHEMA_URL = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
LABEL = "cu128_sm90"
TAGS = "cp311-cp311-linux_x86_64"
SELECTORS = ("cu128", "cu12", "cu128-sm90", "sm90", "cu128-sm100", "sm120")
ARCHES_AT_MOST = 128


def variant_json(values: int) -> str:
    """One label holding `values` values: up to 128 sm_arch values, then lists of 128 elsewhere."""
    arches = ["90_real"] + [f"{index}_real" for index in range(100, 100 + min(values, ARCHES_AT_MOST) - 1)]
    properties: dict = {"nvidia": {"sm_arch": arches}}
    left, space = values - len(arches), 0
    while left > 0:
        count = min(left, 128)
        properties.setdefault(f"space{space // 8}", {})[f"f{space % 8}"] = [f"v{i}" for i in range(count)]
        left -= count
        space += 1
    return json.dumps({"$schema": SCHEMA_URL, "default-priorities": {"namespace": list(properties)},
                       "variants": {LABEL: properties}})


def build(farm: pathlib.Path, values: int, project: int) -> pathlib.Path:
    folder = farm / f"{values}-{project}"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"kernels_{project}"
    return wheelbuilder.build_wheel(folder, name, "2.8.3", TAGS, filename=f"{name}-2.8.3-{TAGS}-{LABEL}.whl",
                                    files={f"{name}/__init__.py": "", f"{name}-2.8.3.dist-info/variant.json":
                                           variant_json(values)})


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, bytes, float]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.perf_counter()
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    answer = response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    return response.status, answer, elapsed


def token(binary: pathlib.Path, data: pathlib.Path) -> str:
    made = subprocess.run([str(binary), "token", "create", "--data", str(data), "--name", "bench"],
                          capture_output=True, text=True, check=True, timeout=60)
    return made.stdout.strip()


def measure(binary: pathlib.Path, wheels: list[pathlib.Path], folder: pathlib.Path, reads: int) -> dict:
    """Each wheel (one project each) uploaded into one server, then each project read. Figures
    are the best of their repeats, the least disturbed by whatever else the machine runs."""
    data = folder / "data"
    data.mkdir(parents=True)
    secret = token(binary, data)
    server = Wheelhouse(binary, data, threads=2, log_path=folder / "serve.log", nice=0)
    server.start()
    try:
        uploads = []
        for wheel in wheels:
            status, answer, seconds = request(server.port, "PUT", f"/api/v1/files/{wheel.name}", wheel.read_bytes(),
                                              {"Authorization": f"Bearer {secret}",
                                               "Content-Type": "application/octet-stream"})
            uploads.append(seconds * 1000)
        figures = {"upload_status": status, "upload_ms": min(uploads), "upload_median_ms": statistics.median(uploads),
                   "upload_answer": answer.decode(errors="replace")[:200]}
        if status not in (200, 201):
            return figures
        projects = [f"kernels-{index}" for index in range(len(wheels))]
        for name, route in (("matrix", "/api/v1/projects/{}/variants"), ("project", "/api/v1/projects/{}")):
            times = []
            for project in projects:
                for _ in range(reads):
                    status, _, seconds = request(server.port, "GET", route.format(project))
                    assert status == 200, (route, status)
                    times.append(seconds * 1000)
            figures[f"{name}_ms"], figures[f"{name}_median_ms"] = min(times), statistics.median(times)
        pages = []
        for project in projects:
            for selector in SELECTORS:  # each page's first render: nothing cached yet
                status, _, seconds = request(server.port, "GET", f"/variants/{selector}/simple/{project}/",
                                             headers={"Accept": "application/vnd.pypi.simple.v1+json"})
                assert status == 200, (selector, status)
                pages.append(seconds * 1000)
        figures["new_page_ms"], figures["new_page_median_ms"] = min(pages), statistics.median(pages)
        return figures
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--reference", type=pathlib.Path, default=pathlib.Path("/work/ref/wheelhouse-3603e40"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096, 8192])
    parser.add_argument("--projects", type=int, default=5, help="wheels uploaded (one project each) per size")
    parser.add_argument("--reads", type=int, default=3, help="reads of each project's API answers")
    parser.add_argument("--reference-only", action="store_true", help="measure only the reference binary")
    parser.add_argument("--floor-ms", type=float, default=20.0)
    args = parser.parse_args()

    report = {"load_average_before": load_average(), "sizes": args.sizes, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="variant-json-cost-") as scratch:
        farm = pathlib.Path(scratch) / "farm"
        wheels = {size: [build(farm, size, project) for project in range(args.projects)] for size in args.sizes}
        roles = (("this build", args.binary), ("reference", args.reference))
        for role, binary in roles[1:] if args.reference_only else roles:
            report["runs"][role] = {size: measure(binary, wheels[size], pathlib.Path(scratch) / role.replace(" ", "-") /
                                                  str(size), args.reads) for size in args.sizes}
    report["load_average_after"] = load_average()

    columns = ("upload_ms", "matrix_ms", "project_ms", "new_page_ms")
    print(f"| binary | values | variant.json bytes | status | " + " | ".join(columns) + " |")
    print("| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in columns) + " |")
    too_costly = []
    for role, runs in report["runs"].items():
        before = None
        for size in args.sizes:
            figures = runs[size]
            cells = []
            for column in columns:
                value = figures.get(column)
                if value is None:
                    cells.append("—")
                    continue
                ratio = value / before[column] if before and before.get(column) else None
                cells.append(f"{value:.1f}" + (f" (×{ratio:.1f})" if ratio else ""))
                if (role == "this build" and ratio and ratio > 3 and before[column] >= args.floor_ms):
                    too_costly.append(f"{column} at {size} values: ×{ratio:.1f}")
            print(f"| {role} | {size} | {len(variant_json(size))} | {figures['upload_status']} | " + " | ".join(cells) + " |")
            before = figures
    print(f"\nload average before {report['load_average_before']}, after {report['load_average_after']}")
    print(f"results: {save_results(report, 'variant_json_cost')}")
    if too_costly:
        print("doubling the input more than tripled the cost: " + "; ".join(too_costly))
        sys.exit(1)


if __name__ == "__main__":
    main()
