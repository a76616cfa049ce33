#!/usr/bin/python3
"""CPU per file create on the file system holding FOLDER: in a fresh directory, right after
CHURN files were made and deleted in a sibling directory, and WAIT seconds later.

ext4 without a journal does not reuse an inode freed in the last 60 s (360 s while its
inode-table block is dirty), and each create walks past every such inode of its block group
(fs/ext4/ialloc.c, recently_deleted): the slow mode of bench/UPLOADS.md.

    /usr/bin/python3 bench/inode_reuse_probe.py /tmp/probe 5000 20000 100
"""
import os
import resource
import shutil
import sys
import time


def creates(root: str, tag: str, count: int) -> tuple[float, float]:
    """Microseconds of system CPU and of wall time per create of `count` empty files."""
    folder = os.path.join(root, tag)
    os.mkdir(folder)
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    for i in range(count):
        os.close(os.open(os.path.join(folder, f"f{i}"), os.O_CREAT | os.O_WRONLY, 0o600))
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_stime - before.ru_stime) / count * 1e6, (time.monotonic() - started) / count * 1e6


def main() -> None:
    root, count, churn, wait = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    print("fresh: %.1f us system CPU per create (%.1f us wall)" % creates(root, "fresh", count))
    churned = os.path.join(root, "churn")
    os.mkdir(churned)
    for i in range(churn):
        os.close(os.open(os.path.join(churned, f"c{i}"), os.O_CREAT | os.O_WRONLY, 0o600))
    for i in range(churn):
        os.unlink(os.path.join(churned, f"c{i}"))
    print(f"after {churn} deletes: %.1f us system CPU per create (%.1f us wall)" % creates(root, "after", count))
    time.sleep(wait)
    print(f"{wait:.0f} s later: %.1f us system CPU per create (%.1f us wall)" % creates(root, "later", count))
    shutil.rmtree(root)


if __name__ == "__main__":
    main()
