"""Builds real wheels with zipfile for the end-to-end tests: a dist-info with METADATA, WHEEL
and a RECORD holding true sha256 hashes and sizes, exactly as `wheel` writes them. Keyword
arguments break them on purpose, one way at a time, for the tests of what must be refused.
"""

from __future__ import annotations

import base64
import hashlib
import pathlib
import re
import zipfile
from typing import Mapping, Sequence


def escape_name(name: str) -> str:
    """The distribution part of a wheel filename: runs of -_. become '_' (as `wheel` does)."""
    return re.sub(r"[-_.]+", "_", name)


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def wheel_filename(name: str, version: str, tags: str | Sequence[str] = "py3-none-any", build: str | None = None) -> str:
    tag_text = tags if isinstance(tags, str) else "-".join(tags)
    build_part = f"-{build}" if build else ""
    return f"{escape_name(name)}-{version}{build_part}-{tag_text}.whl"


def build_wheel(
    directory: str | pathlib.Path,
    name: str,
    version: str,
    tags: str | Sequence[str] = "py3-none-any",
    build: str | None = None,
    files: Mapping[str, bytes | str] | None = None,
    metadata_extra: str = "",
    requires_python: str | None = None,
    summary: str | None = None,
    *,
    filename: str | None = None,
    metadata_name: str | None = None,
    metadata_version: str | None = None,
    dist_info: str | None = None,
    wheel_version: str = "1.0",
    unlisted: Mapping[str, bytes | str] | None = None,
    record_overrides: Mapping[str, tuple[str, str]] | None = None,
    omit: Sequence[str] = (),
    description: str = "A wheel built by tests/e2e/wheelbuilder.py.\n",
    metadata_text: str | None = None,
) -> pathlib.Path:
    """Writes a wheel into `directory` and returns its path.

    files            archive path -> contents (default: one module `<name>/__init__.py`)
    metadata_extra   more METADATA header lines, e.g. "Requires-Dist: torch\\n"
    filename         write under this name instead of the one name/version/tags make
    metadata_name    the Name METADATA states (default: `name`)
    metadata_version the Version METADATA states (default: `version`)
    dist_info        the .dist-info directory (default: <escaped name>-<version>.dist-info)
    unlisted         entries added to the archive but left out of RECORD
    record_overrides archive path -> (hash, size) written to RECORD instead of the true ones
    omit             dist-info files (METADATA, WHEEL, RECORD) to leave out
    description      the METADATA body (the long description twine sends as a form field)
    metadata_text    the whole METADATA, as given, instead of the one built from the arguments
    """
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    module = escape_name(name).lower()
    files = dict(files) if files is not None else {f"{module}/__init__.py": f"__version__ = {version!r}\n"}
    dist_info = dist_info or f"{escape_name(name)}-{version}.dist-info"
    tag_text = tags if isinstance(tags, str) else "-".join(tags)

    metadata = f"Metadata-Version: 2.1\nName: {metadata_name or name}\nVersion: {metadata_version or version}\n"
    if summary is not None:
        metadata += f"Summary: {summary}\n"
    if requires_python is not None:
        metadata += f"Requires-Python: {requires_python}\n"
    metadata += metadata_extra
    metadata += "\n" + description
    if metadata_text is not None:
        metadata = metadata_text

    python_tags, abi_tags, platform_tags = tag_text.split("-")
    wheel = f"Wheel-Version: {wheel_version}\nGenerator: wheelhouse-tests\nRoot-Is-Purelib: false\n"
    for python_tag in python_tags.split("."):
        for abi_tag in abi_tags.split("."):
            for platform_tag in platform_tags.split("."):
                wheel += f"Tag: {python_tag}-{abi_tag}-{platform_tag}\n"
    if build:
        wheel += f"Build: {build}\n"

    entries: list[tuple[str, bytes]] = [(path, data.encode() if isinstance(data, str) else data) for path, data in files.items()]
    if "METADATA" not in omit:
        entries.append((f"{dist_info}/METADATA", metadata.encode()))
    if "WHEEL" not in omit:
        entries.append((f"{dist_info}/WHEEL", wheel.encode()))

    overrides = record_overrides or {}
    record = ""
    for path, data in entries:
        hash_text, size_text = overrides.get(path, (record_hash(data), str(len(data))))
        record += f"{path},{hash_text},{size_text}\n"
    record += f"{dist_info}/RECORD,,\n"

    path = directory / (filename or wheel_filename(name, version, tags, build))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry, data in entries:
            archive.writestr(entry, data)
        for entry, data in (unlisted or {}).items():
            archive.writestr(entry, data.encode() if isinstance(data, str) else data)
        if "RECORD" not in omit:
            archive.writestr(f"{dist_info}/RECORD", record)
    return path


def read_metadata(path: str | pathlib.Path) -> bytes:
    """The *.dist-info/METADATA bytes of a wheel."""
    with zipfile.ZipFile(path) as archive:
        (name,) = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        return archive.read(name)
