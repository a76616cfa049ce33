"""Issue 24 item 2: an sdist is read as the programs that unpack it read it.

The archives an attacker got past the text checks are refused with a 400 that leads with the fix,
and nothing is stored. Then a generated set (random and mutated tars of every member type,
nesting, pax and GNU long names, ustar prefixes, link chains, duplicates, non-UTF-8 names) goes
to the real binary: `wheelhouse inspect --members` says what it checked, a server the test starts
takes or refuses each as an upload, and every archive it takes is unpacked by Python's tarfile
(extractall, no filter: the default before 3.14) and by GNU tar (as root) in a folder nested
inside a sandbox. Nothing may appear outside that folder, and tarfile and GNU tar must list
exactly the members the server checked.

WHEELHOUSE_HOSTILE_SEED and WHEELHOUSE_HOSTILE_COUNT change the generated set.
"""

from __future__ import annotations

import dataclasses
import errno
import gzip
import io
import json
import os
import pathlib
import random
import sqlite3
import subprocess
import tarfile
import urllib.error
import urllib.request

import pytest

from tarwriter import BLOCK, GNU, USTAR, end, header, long_name, padded, pax, start_of_sdist, with_checksum
from test_uploads import make_token

NESTING = 6  # folders between the sandbox and the extraction root: ".." that far lands in the sandbox


# --- the attacker's archives (issue 24 item 2) ------------------------------------------------

def escape_through_a_link() -> bytes:
    root = b"demo-1.0"
    return gzip.compress(start_of_sdist(root, "demo", "1.0")
                         + header(root + b"/a/b/up", b"2", link=b"../..")
                         + header(root + b"/esc", b"2", link=b"a/b/up/../..")
                         + header(root + b"/esc/pwned.txt", size=6) + padded(b"owned\n") + end())


def file_named_like_a_directory() -> bytes:
    """A '0' member named like a directory, its 1024 bytes of data laid out so that a reader who
    takes it for a directory sees an innocent file there, whose data swallows the link that
    tarfile and GNU tar, skipping the data, read next."""
    root = b"demo-1.0"
    innocent = header(root + b"/innocent.txt", size=2 * BLOCK) + b"\x00" * BLOCK
    return gzip.compress(start_of_sdist(root, "demo", "1.0") + header(root + b"/d/", size=len(innocent)) + innocent
                         + header(root + b"/ln", b"2", link=b"/etc/passwd") + end())


def prefix_under_gnu_magic() -> bytes:
    root = b"demo-1.0"
    return gzip.compress(start_of_sdist(root, "demo", "1.0")
                         + header(root + b"/pwned.txt", size=6, magic=GNU, prefix=b"../../../../tmp/wheelhouse-hostile")
                         + padded(b"owned\n") + end())


def huge_pax_paths() -> bytes:
    """100 members whose pax paths are 4 MiB each, after 4 MiB of noise that keeps the whole
    under the gzip-bomb ratio: the server once kept every path (405 MiB) and took it."""
    root = b"demo-1.0"
    noise = random.Random(24).randbytes(4 << 20)
    body = io.BytesIO()
    with gzip.GzipFile(fileobj=body, mode="wb", compresslevel=6) as out:
        out.write(start_of_sdist(root, "demo", "1.0") + header(root + b"/noise.bin", size=len(noise)) + padded(noise))
        for index in range(100):
            name = (root + b"/" + (b"%03d/" % index) * (1 << 20))[:4 << 20]
            out.write(pax([(b"path", name)]) + header(root + b"/short", size=0))
        out.write(end())
    return body.getvalue()


ATTACKS = [
    ("escape through an earlier link", escape_through_a_link, "rebuild the sdist without links that leave it"),
    ("a file named like a directory", file_named_like_a_directory,
     "rebuild the sdist with python -m build: a file's name ends in '/'"),
    ("a ustar prefix under GNU magic", prefix_under_gnu_magic,
     "rebuild the sdist with python -m build: a tar header has a prefix field under GNU magic"),
    ("100 pax paths of 4 MiB", huge_pax_paths, "rebuild the sdist with shorter names"),
]


# --- the server, and what it stored -----------------------------------------------------------

@pytest.fixture
def index(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    return start_server(data), data, token


def upload(server, token: str, filename: str, body: bytes) -> tuple[int, str]:
    """PUT /api/v1/files/<filename>; the status and its reason phrase."""
    request = urllib.request.Request(f"{server.url}api/v1/files/{filename}", data=body, method="PUT",
                                     headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, answer.reason
    except urllib.error.HTTPError as refused:
        return refused.code, refused.reason


def legacy_upload(server, token: str, path: pathlib.Path) -> str:
    """twine's form, with curl: the status line."""
    result = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-D", "-", "-u", f"__token__:{token}",
                             "-F", f"content=@{path}", server.url + "legacy/"], capture_output=True, text=True, timeout=120)
    return next(line for line in result.stdout.splitlines() if line.startswith("HTTP/") and " 100 " not in line)


def stored(data: pathlib.Path) -> tuple[list, list, list]:
    with sqlite3.connect(data / "catalog.db") as db:
        rows = db.execute("SELECT filename FROM files").fetchall()
    blobs = [p for p in (data / "blobs").rglob("*") if p.is_file()] if (data / "blobs").exists() else []
    return rows, blobs, list((data / "tmp").iterdir())


@pytest.mark.parametrize("what,make,reason", ATTACKS, ids=[attack[0] for attack in ATTACKS])
def test_the_attackers_sdists_are_refused_with_the_fix_and_nothing_stored(index, tmp_path, what, make, reason):
    server, data, token = index
    path = tmp_path / "demo-1.0.tar.gz"
    path.write_bytes(make())
    status, phrase = upload(server, token, path.name, path.read_bytes())
    assert (status, phrase.startswith(reason)) == (400, True), (status, phrase)
    status_line = legacy_upload(server, token, path)
    assert status_line.startswith("HTTP/1.1 400 " + reason), status_line
    assert stored(data) == ([], [], [])


# --- the generated set ------------------------------------------------------------------------

@dataclasses.dataclass
class Member:
    kind: bytes              # b"0", b"\x00", b"5", b"2", b"1", or a type nobody should send
    name: bytes
    link: bytes = b""
    data: bytes = b""
    spelling: str = "header"  # header, prefix, gnu, pax: where the name is written
    size_field: bytes | None = None
    hostile: bool = False


DIRECTORY_PARTS = [b"a", b"b", b"src", b"pkg", b"caf\xc3\xa9", b"l" * 120, b"sp ace"]
LEAVES = [b"", b".py", b"-\xc3\xa9", b"l" * 100, b"PKG-INFO"]
HOSTILE_PARTS = [b"..", b".", b"", b"\xff\xfe", b"d/", b"a\\b", b"C:", b"\x01", b"n" * 300, b"x.py", b"a"]
HOSTILE_TARGETS = [b"..", b"../..", b"../../..", b"a/b/..", b"/etc/passwd", b"src/../..", b"later/../x", b"x.py/y",
                   b"", b".", b"./a", b"a//b"]
FILE_SIZES = [0, 1, 100, 511, 512, 513, 1500]


def relative(name: bytes, root: bytes) -> bytes:
    return name.removeprefix(root + b"/")


def benign_path(rng: random.Random, root: bytes, earlier: list[Member], index: int) -> bytes:
    """Directories named before, or new ones, then a leaf no member has."""
    directories = DIRECTORY_PARTS + [relative(m.name.rstrip(b"/"), root) for m in earlier if m.kind == b"5"]
    parts = [rng.choice(directories) for _ in range(rng.randint(0, 2))]
    return b"/".join([root, *parts, b"m%d" % index + rng.choice(LEAVES)])


def hostile_path(rng: random.Random, root: bytes) -> bytes:
    path = b"/".join(rng.choice(DIRECTORY_PARTS + HOSTILE_PARTS) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.1:
        return rng.choice([b"/", b"other-1.0/", b""]) + path
    return root + b"/" + path


def random_link(rng: random.Random, root: bytes, name: bytes, earlier: list[Member], hostile: bool) -> bytes:
    depth = relative(name, root).count(b"/")
    up = b"../" * rng.randint(0, depth)
    if hostile:
        if earlier and rng.random() < 0.4:
            return up + relative(rng.choice(earlier).name, root) + rng.choice([b"/..", b"/../..", b"/x.py", b""])
        return b"/".join(rng.choice(HOSTILE_TARGETS + DIRECTORY_PARTS) for _ in range(rng.randint(1, 3)))
    roll = rng.random()
    if earlier and roll < 0.5:  # to an earlier member, or through an earlier link (a chain)
        return b"../" * depth + relative(rng.choice(earlier).name.rstrip(b"/"), root)
    if roll < 0.8:  # to what a later member may make
        return up + b"/".join(rng.choice(DIRECTORY_PARTS) for _ in range(rng.randint(1, 2)))
    return rng.choice([b".", b"./a", b"a//b/", up.rstrip(b"/") or b"."])


def fits_ustar(name: bytes) -> bool:
    """Whether a ustar prefix (155 bytes) and name (100) can hold `name`, split at a '/'."""
    cut = name.rfind(b"/", 0, 156)
    return len(name) <= 100 or (cut > 0 and len(name) - cut - 1 <= 100)


def random_member(rng: random.Random, root: bytes, earlier: list[Member], hostile: bool) -> Member:
    """A member as build tools write them, or (`hostile`) as an attacker would."""
    kinds = [b"0", b"5", b"2", b"1"] + ([b"\x00", b"3", b"6", b"7", b"S", b"z"] if hostile else [])
    kind = rng.choices(kinds, weights=[30, 12, 20, 10, 3, 1, 1, 1, 1, 1][:len(kinds)])[0]
    if not hostile:
        name = benign_path(rng, root, earlier, len(earlier))
    elif earlier and rng.random() < 0.2:
        name = rng.choice(earlier).name  # a duplicate
    else:
        name = hostile_path(rng, root)
    files = [other.name for other in earlier if other.kind in (b"0", b"\x00")]
    if kind == b"1" and not files and not hostile:
        kind = b"0"
    if kind == b"5" and rng.random() < 0.5:
        name += b"/"
    member = Member(kind, name, hostile=hostile)
    if kind == b"2":
        member.link = random_link(rng, root, name, earlier, hostile)
    elif kind == b"1":
        member.link = rng.choice(files) if files and (not hostile or rng.random() < 0.8) else hostile_path(rng, root)
    elif kind in (b"0", b"\x00"):
        member.data = rng.randbytes(rng.choice(FILE_SIZES))
    if hostile and kind in (b"5", b"2", b"1") and rng.random() < 0.2:
        # data after a link or directory: hidden headers GNU tar skips and tarfile reads
        member.data = header(root + b"/hidden", b"2", link=b"/etc/passwd") + b"\x00" * BLOCK
    member.spelling = rng.choices(["header", "prefix", "gnu", "pax"], weights=[5, 1, 2, 2])[0]
    if len(name) > 100 and member.spelling == "header":
        member.spelling = rng.choice(["gnu", "pax", "prefix"])
    if member.spelling == "prefix" and not fits_ustar(name):
        member.spelling = rng.choice(["gnu", "pax"])
    if hostile and rng.random() < 0.1:
        member.size_field = rng.choice([b"\x0000000000001", b"+0000000001\x00", b"\x80" + b"\x00" * 10 + b"\x01",
                                        b"\xff" * 12, b"           \x00"])
    return member


def write_member(member: Member, rng: random.Random) -> bytes:
    """Its headers, with the name where `spelling` says and a long link in a GNU or pax header."""
    out, records = b"", []
    name, magic, prefix, link = member.name, USTAR, b"", member.link
    if member.spelling == "gnu":
        out += long_name(name)
        name, magic = name[:100], GNU
    elif member.spelling == "pax":
        records.append((b"path", name))
        if rng.random() < 0.5:
            records.append((b"mtime", b"1700000000.5"))
        name = name[:100]
    elif member.spelling == "prefix" and b"/" in name:
        cut = name.rfind(b"/", 0, 156)
        prefix, name = name[:max(cut, 0)], name[cut + 1:]
        if member.hostile and rng.random() < 0.3:
            magic = GNU  # tarfile reads a prefix under any magic, GNU tar does not
    if len(link) > 100:
        if rng.random() < 0.5:
            out += long_name(link, b"K")
        else:
            records.append((b"linkpath", link))
    if records:
        out += pax(records)
    if rng.random() < 0.02:
        out += pax([(b"comment", b"git archive")], b"g")
    out += header(name, member.kind, len(member.data), link[:100], magic, prefix, member.size_field)
    return out + padded(member.data)


def random_sdist(rng: random.Random, name: str, version: str) -> bytes:
    root = f"{name}-{version}".encode()
    tar = start_of_sdist(root, name, version) if rng.random() < 0.97 else b""
    earlier: list[Member] = []
    hostility = rng.choice([0.0, 0.0, 0.05, 0.2, 0.5])
    for _ in range(rng.randint(1, 12)):
        if rng.random() < hostility / 4:
            members = escape_chain(rng, root)  # what the text checks let through
        else:
            members = [random_member(rng, root, earlier, rng.random() < hostility)]
        for member in members:
            tar += write_member(member, rng)
            earlier.append(member)
    return tar + end()


def escape_chain(rng: random.Random, root: bytes) -> list[Member]:
    """A link that climbs back to the root, a link that climbs on through it, maybe a file
    written through that: each link reads as inside the root when its target is read as text."""
    depth = rng.randint(1, 3)
    folders = b"/".join(b"c%d" % level for level in range(depth))
    climb = b"/".join([b".."] * depth)
    chain = [Member(b"2", root + b"/" + folders + b"/up", climb, hostile=True),
             Member(b"2", root + b"/esc", folders + b"/up/" + b"/".join([b".."] * rng.randint(1, 3)), hostile=True)]
    if rng.random() < 0.5:
        chain.append(Member(b"0", root + b"/esc/pwned.txt", data=b"owned\n", hostile=True))
    return chain


def mutated(rng: random.Random, tar: bytes) -> bytes:
    """A random byte or field of a header changed, the checksum made right again (mostly)."""
    blocks = bytearray(tar)
    headers = [offset for offset in range(0, len(blocks) - 2 * BLOCK, BLOCK)
               if blocks[offset + 257:offset + 262] == b"ustar"]
    if not headers:
        return tar
    offset = rng.choice(headers)
    field = rng.choice([(0, 100), (124, 12), (156, 1), (157, 100), (257, 8), (345, 155), (100, 8)])
    at = offset + field[0] + rng.randrange(field[1])
    blocks[at] = rng.choice([0, ord("/"), ord("."), ord("0"), ord("5"), ord("2"), ord("1"), 0x80, 0xFF,
                             rng.getrandbits(8)])
    if rng.random() < 0.9:
        blocks[offset:offset + BLOCK] = with_checksum(bytearray(blocks[offset:offset + BLOCK]))
    return bytes(blocks)


def generated(seed: int, count: int) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    archives = []
    for index in range(count):
        version = f"1.{index}"
        tar = random_sdist(rng, "hostile", version)
        if rng.random() < 0.2:
            tar = mutated(rng, tar)
        archives.append((f"hostile-{version}.tar.gz", gzip.compress(tar)))
    return archives


# --- what each reader lists and unpacks -------------------------------------------------------

def tarfile_members(path: pathlib.Path) -> list[tuple[str, str]]:
    names = {tarfile.REGTYPE: "file", tarfile.AREGTYPE: "file", tarfile.DIRTYPE: "directory",
             tarfile.SYMTYPE: "symlink", tarfile.LNKTYPE: "hardlink"}
    with tarfile.open(path) as archive:
        return [(names.get(member.type, repr(member.type)), member.name) for member in archive.getmembers()]


def gnu_tar_members(path: pathlib.Path) -> list[tuple[str, str]]:
    environment = dict(os.environ, LC_ALL="C.UTF-8")
    names = subprocess.run(["tar", "--quoting-style=literal", "-tzf", str(path)], capture_output=True, env=environment,
                           timeout=60)
    verbose = subprocess.run(["tar", "--quoting-style=literal", "-tvzf", str(path)], capture_output=True,
                             env=environment, timeout=60)
    assert names.returncode == 0 and verbose.returncode == 0, names.stderr + verbose.stderr
    kinds = {"-": "file", "d": "directory", "l": "symlink", "h": "hardlink"}
    return [(kinds.get(line[:1].decode(), line[:1].decode()), name.decode().removesuffix("/"))
            for line, name in zip(verbose.stdout.splitlines(), names.stdout.splitlines(), strict=True)]


def sandbox_for(base: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """An empty extraction root NESTING folders deep inside a fresh sandbox."""
    sandbox = base
    sandbox.mkdir()
    root = sandbox.joinpath(*[f"n{level}" for level in range(NESTING)], "root")
    root.mkdir(parents=True)
    return sandbox, root


def outside(sandbox: pathlib.Path, root: pathlib.Path) -> list[str]:
    """Whatever the sandbox holds besides the folders leading to the root and what is under it."""
    allowed = {sandbox.joinpath(*[f"n{level}" for level in range(depth)]) for depth in range(1, NESTING + 1)}
    found = []
    for folder, directories, files in os.walk(sandbox):
        for name in directories + files:
            path = pathlib.Path(folder) / name
            if path != root and path not in allowed and root not in path.parents:
                found.append(str(path.relative_to(sandbox)))
    return found


def loops(link: pathlib.Path) -> bool:
    """Whether the kernel finds a loop resolving `link`: it leads nowhere (realpath's guess is no answer)."""
    try:
        os.stat(link)
    except OSError as failure:
        return failure.errno == errno.ELOOP
    return False


def escaping_links(root: pathlib.Path) -> list[str]:
    """The symbolic links under `root` that resolve outside it, however deep."""
    found = []
    for folder, directories, files in os.walk(root):
        for name in directories + files:
            path = pathlib.Path(folder) / name
            if not path.is_symlink() or loops(path):
                continue
            if root.resolve() not in pathlib.Path(os.path.realpath(path)).parents:
                found.append(f"{path.relative_to(root)} -> {os.readlink(path)}")
    return found


def unpack_with_tarfile(path: pathlib.Path, root: pathlib.Path) -> None:
    with tarfile.open(path) as archive:
        archive.extractall(root)  # no filter: the default before Python 3.14


def unpack_with_gnu_tar(path: pathlib.Path, root: pathlib.Path) -> None:
    result = subprocess.run(["tar", "-xzf", str(path), "-C", str(root)], capture_output=True, timeout=60,
                            env=dict(os.environ, LC_ALL="C.UTF-8"))
    assert result.returncode == 0, result.stderr.decode(errors="replace")


def inspect_members(binary: pathlib.Path, paths: list[pathlib.Path]) -> list[dict]:
    result = subprocess.run([str(binary), "inspect", "--members", "--", *map(str, paths)], capture_output=True,
                            timeout=600)
    assert result.returncode in (0, 1), result.stderr.decode(errors="replace")
    reports = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert len(reports) == len(paths), result.stderr.decode(errors="replace")
    return reports


def test_every_sdist_the_server_takes_unpacks_inside_its_folder_as_the_members_it_checked(
        index, tmp_path, wheelhouse_bin):
    server, data, token = index
    seed = int(os.environ.get("WHEELHOUSE_HOSTILE_SEED", "24"))
    count = int(os.environ.get("WHEELHOUSE_HOSTILE_COUNT", "400"))
    archives = tmp_path / "archives"
    archives.mkdir()
    paths = []
    for filename, body in generated(seed, count):
        (archives / filename).write_bytes(body)
        paths.append(archives / filename)
    reports = inspect_members(wheelhouse_bin, paths)

    accepted = 0
    for path, report in zip(paths, reports):
        status, phrase = upload(server, token, path.name, path.read_bytes())
        context = f"{path.name} (seed {seed}): {report.get('error')}"
        if "error" in report:
            assert status in (400, 413), f"{context}: inspect refused it, the server answered {status} {phrase}"
            assert phrase.startswith(("rebuild", "build", "upload", "rename")), f"{context}: {phrase}"
            continue
        assert status == 201, f"{context}: inspect took it, the server answered {status} {phrase}"
        accepted += 1
        checked = [(member["type"], member["path"]) for member in report["members"]]
        assert tarfile_members(path) == checked, context
        assert gnu_tar_members(path) == checked, context
        for name, unpack in (("tarfile", unpack_with_tarfile), ("gnu-tar", unpack_with_gnu_tar)):
            sandbox, root = sandbox_for(tmp_path / f"{path.name}-{name}")
            unpack(path, root)
            assert outside(sandbox, root) == [], f"{context}: {name} wrote outside the folder"
            assert escaping_links(root) == [], f"{context}: {name} made links that leave the folder"
    rows, blobs, spooled = stored(data)
    assert (len(rows), len(blobs), spooled) == (accepted, accepted, [])
    # The set is worth running only while it reaches both sides of the checks.
    assert accepted >= count // 10, f"only {accepted} of {count} generated sdists were accepted"
    assert len(paths) - accepted >= count // 10
