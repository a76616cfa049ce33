"""Tar streams byte by byte, including what build tools never write: any type, magic, prefix,
size field or name, pax extended and global headers, GNU long names and links. For the hostile
sdist tests and bench/sdist_archives.py."""

from __future__ import annotations

BLOCK = 512
USTAR = b"ustar\x0000"
GNU = b"ustar  \x00"


def octal(value: int, width: int) -> bytes:
    return b"%0*o\x00" % (width - 1, value)


def header(name: bytes, kind: bytes = b"0", size: int = 0, link: bytes = b"", magic: bytes = USTAR,
           prefix: bytes = b"", size_field: bytes | None = None) -> bytes:
    block = bytearray(BLOCK)
    block[0:len(name[:100])] = name[:100]
    block[100:108] = octal(0o755 if kind == b"5" else 0o644, 8)
    block[108:116] = octal(0, 8)
    block[116:124] = octal(0, 8)
    block[124:136] = size_field if size_field is not None else octal(size, 12)
    block[136:148] = octal(1_700_000_000, 12)
    block[156:157] = kind
    block[157:157 + len(link[:100])] = link[:100]
    block[257:265] = magic
    block[345:345 + len(prefix[:155])] = prefix[:155]
    return with_checksum(block)


def with_checksum(block: bytearray) -> bytes:
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\x00 " % sum(block)
    return bytes(block)


def padded(data: bytes) -> bytes:
    return data + b"\x00" * (-len(data) % BLOCK)


def pax_record(key: bytes, value: bytes) -> bytes:
    body = b" " + key + b"=" + value + b"\n"
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length += 1
    return str(length).encode() + body


def pax(records: list[tuple[bytes, bytes]], kind: bytes = b"x") -> bytes:
    data = b"".join(pax_record(key, value) for key, value in records)
    return header(b"././@PaxHeader", kind, len(data)) + padded(data)


def long_name(name: bytes, kind: bytes = b"L") -> bytes:
    return header(b"././@LongLink", kind, len(name) + 1, magic=GNU) + padded(name + b"\x00")


def end() -> bytes:
    return b"\x00" * (2 * BLOCK)


def pkg_info(name: str, version: str) -> bytes:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: hostile\n\n".encode()


def start_of_sdist(root: bytes, name: str, version: str) -> bytes:
    info = pkg_info(name, version)
    return header(root + b"/", b"5") + header(root + b"/PKG-INFO", size=len(info)) + padded(info)
