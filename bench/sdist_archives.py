#!/usr/bin/python3
"""What reading an sdist costs whatever its names: this build beside a baseline binary (the
previous one, say main's), in the same run, each sdist given to `wheelhouse ingest` (the upload's
checks, without the network) on a fresh data folder.

The sdists, each demo-1.0.tar.gz with a PKG-INFO, built by tests/e2e/tarwriter.py:
- issue 24's: 100 members whose pax paths are 4 MiB each, after 4 MiB of noise;
- the worst this build takes: 99,990 files each in a directory of its own, 83-byte parts
  (200,000 paths, 16 MiB of names: both limits reached at once); 99,990 files with 160-byte names in one directory (16 MiB of names);
  99,990 symbolic links whose targets leave 150 bytes unresolved; 99,990 files with short names;
- an ordinary one: 2,000 files in 100 directories.

Reports, per sdist and binary, the verdict, peak RSS (MiB) and CPU seconds, as medians over the
rounds. Nothing is asserted; Markdown goes to stdout and every raw figure to bench/results/.

    /usr/bin/python3 bench/sdist_archives.py --baseline /path/to/previous/wheelhouse [--rounds 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import pathlib
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from tarwriter import end, header, long_name, padded, pax, start_of_sdist  # noqa: E402

sys.path.insert(0, str(BENCH_DIR))
from simple_pages import load_average, save_results  # noqa: E402

ROOT = b"demo-1.0"
MEMBERS = 99_990


def padded_name(index: int, width: int) -> bytes:
    text = b"%d" % index
    return text + b"x" * (width - len(text))


def named(name: bytes, kind: bytes = b"0") -> bytes:
    return (long_name(name) if len(name) > 100 else b"") + header(name[:100], kind)


def scenarios() -> dict[str, list[bytes] | None]:
    noise = random.Random(24).randbytes(4 << 20)
    return {
        "issue 24: 100 pax paths of 4 MiB": [header(ROOT + b"/noise.bin", size=len(noise)) + padded(noise)] + [
            pax([(b"path", (ROOT + b"/" + (b"%03d/" % index) * (1 << 20))[:4 << 20])]) + header(ROOT + b"/short")
            for index in range(100)],
        "99,990 files, a directory each (200,000 paths, 16 MiB of names)": [
            named(ROOT + b"/" + padded_name(i, 83) + b"/" + padded_name(i, 83)) for i in range(MEMBERS)],
        "99,990 files, 160-byte names, one directory": [named(ROOT + b"/" + padded_name(i, 160)) for i in range(MEMBERS)],
        "99,990 links, 150 bytes left unresolved each": [
            pax([(b"linkpath", b"missing/" + padded_name(i, 150))]) + header(ROOT + b"/l%d" % i, b"2")
            for i in range(MEMBERS)],
        "99,990 files, short names": [header(ROOT + b"/%d" % i) for i in range(MEMBERS)],
        "2,000 files in 100 directories": [header(ROOT + b"/pkg%d/" % (i % 100), b"5") for i in range(100)] + [
            header(ROOT + b"/pkg%d/mod%d.py" % (i % 100, i), size=600) + padded(b"#" * 600) for i in range(2000)],
    }


def write_sdist(path: pathlib.Path, members: list[bytes]) -> None:
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(start_of_sdist(ROOT, "demo", "1.0"))
        for member in members:
            out.write(member)
        out.write(end())


def ingest(binary: pathlib.Path, sdist: pathlib.Path, data: pathlib.Path) -> dict:
    """One `wheelhouse ingest`; its verdict, peak RSS and CPU time (children's rusage)."""
    shutil.rmtree(data, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([str(binary), "ingest", "--data", str(data), str(sdist)], capture_output=True, text=True,
                            timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last_line = (result.stdout + result.stderr).strip().splitlines()[-1]
    verdict = "stored" if result.returncode == 0 else last_line.split(".tar.gz: ", 1)[-1][:70]
    return {"verdict": verdict, "peak_rss_mib": after.ru_maxrss / 1024,
            "cpu_seconds": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--baseline", type=pathlib.Path, required=True, help="the binary to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="sdist-archives-"))
    binaries = {"baseline": args.baseline, "this build": args.binary}
    report = {"load_average_before": load_average(), "binaries": {k: str(v) for k, v in binaries.items()}, "runs": {}}
    try:
        rows = []
        for name, members in scenarios().items():
            sdist = scratch / "demo-1.0.tar.gz"
            write_sdist(sdist, members)
            size = sdist.stat().st_size
            figures = {}
            for _ in range(args.rounds):
                # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: a fresh process per figure.
                for label, binary in binaries.items():
                    run = subprocess.run([sys.executable, __file__, "--one", str(binary), str(sdist), str(scratch / "data")],
                                         capture_output=True, text=True, timeout=900)
                    figures.setdefault(label, []).append(json.loads(run.stdout))
            report["runs"][name] = {"bytes": size, **figures}
            for label in binaries:
                runs = figures[label]
                rows.append(f"| {name} ({size / 1e6:.1f} MB) | {label} | {runs[0]['verdict']} | "
                            f"{statistics.median(r['peak_rss_mib'] for r in runs):.0f} | "
                            f"{statistics.median(r['cpu_seconds'] for r in runs):.2f} |")
        report["load_average_after"] = load_average()
        print(f"load average {report['load_average_before']} -> {report['load_average_after']}\n")
        print("| sdist | binary | verdict | peak RSS (MiB) | CPU (s) |\n| --- | --- | --- | ---: | ---: |")
        print("\n".join(rows))
        print(f"\nraw figures: {save_results(report, 'sdist_archives')}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        print(json.dumps(ingest(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4]))))
    else:
        main()
