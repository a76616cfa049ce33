"""An upstream that lies through PEP 740's provenance (JSON "provenance", HTML data-provenance):
what this index re-emits must be exactly the URL it resolved and kept, an http(s) URL with a host
of at most 8192 bytes, escaped so that the JSON and HTML it serves parse back to that URL and
nothing else; a provenance of another JSON type refuses the page; an owned name never shows one;
and the size of what is served stays linear in what upstream sent."""

from __future__ import annotations

import hashlib
import html
import html.parser
import json
import subprocess

import pytest

from conftest import ingest
from test_hostile_upstream import JSON_TYPE, assert_refused_and_not_kept, get
from upstream_standins import HostileUpstream, wheelhouse_flags
from wheelbuilder import build_wheel

HTML_TYPE = "application/vnd.pypi.simple.v1+html"
PAGE_LIMIT = 100000
SHA = "ab" * 32


class Links(html.parser.HTMLParser):
    """Each <a>'s filename and data-provenance as Python's parser reads them (None when absent)."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str | None]] = []
        self._open: dict | None = None
        self._text = ""
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._open, self._text = dict(attrs), ""

    def handle_data(self, data):
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "a" and self._open is not None:
            self.found.append((self._text.strip(), self._open.get("data-provenance")))
            self._open = None


def entry(filename: str, provenance=..., sha256: str = SHA) -> dict:
    out = {"filename": filename, "url": f"/packages/{filename}", "hashes": {"sha256": sha256}, "size": 1}
    if provenance is not ...:
        out["provenance"] = provenance
    return out


def json_page(project: str, files: list[dict]) -> str:
    return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "versions": [], "files": files})


def served(server, project: str) -> tuple[dict, dict]:
    """{filename: provenance or None} as our JSON page and our HTML page give them, parsed back."""
    status, body = get(server.url + f"simple/{project}/")
    assert status == 200, body
    from_json = {f["filename"]: f.get("provenance") for f in json.loads(body)["files"]}
    status, body = get(server.url + f"simple/{project}/", HTML_TYPE)
    assert status == 200, body
    return from_json, dict(Links(body.decode("utf-8")).found)


@pytest.fixture
def hostile(tmp_path, start_server):
    upstream = HostileUpstream(tmp_path / "tls")
    upstream.page("healthy", json_page("healthy", []))
    server = start_server(tmp_path / "data", *wheelhouse_flags(upstream.ca, {"evil": upstream.url}),
                          "--upstream-max-page-size", str(PAGE_LIMIT), "--upstream-timeout", "3")
    yield server, upstream
    upstream.stop()


def origin(upstream) -> str:
    return f"https://127.0.0.1:{upstream.port}"


LONG = "https://h.example/" + "p" * (8192 - len("https://h.example/"))
CASES = [  # (as written, what is served: None when dropped)
    ("https://h.example/a?x=1&y=<2>", None),  # '<' is no URL character
    ("https://h.example/a?x=1&y='2'#f", "https://h.example/a?x=1&y='2'#f"),  # & and ' escaped, not dropped
    ('https://h.example/"onmouseover="alert(1)', None),
    ("https://h.example/</a><script>alert(1)</script>", None),
    ("https://h.example/a\nb", None), ("https://h.example/a\tb", None), ("https://h.example/\x00", None),
    (" https://h.example/a", None), ("https://h.example/a\\b", None), ("https:\\\\h.example\\a", None),
    ("https://h.example/%3Cscript%3E%00%FF", "https://h.example/%3Cscript%3E%00%FF"),  # kept as written
    ("https://h.example/%zz", None),
    ("https://exämple.com/a", None), ("https://xn--exmple-cua.com/a", "https://xn--exmple-cua.com/a"),
    ("https://user:pass@h.example/a", "https://user:pass@h.example/a"),
    ("javascript:alert(1)", None), ("JaVaScRiPt://h.example/%0aalert(1)", None),
    ("data:text/html,<b>x</b>", None), ("file:///etc/passwd", None), ("ftp://h.example/a", None),
    ("https:///nohost", None), ("https:h.example/a", None), ("", None),
    ("HTTPS://H.example/A", "https://H.example/A"),
    ("//elsewhere.example/p", "https://elsewhere.example/p"),  # any host upstream names: clients fetch it, never the index
    ("../../integrity/x", "{origin}/integrity/x"), ("?q", "{origin}/simple/{project}/?q"),
    (LONG, LONG), (LONG + "p", None),  # 8192 bytes kept, 8193 dropped
]


@pytest.mark.parametrize("form", ["json", "html"])
def test_each_provenance_is_served_exactly_as_resolved_or_dropped_with_the_file_kept(hostile, form):
    server, upstream = hostile
    project = f"prov{form}"
    files = [(f"{project}-1.{i}.tar.gz", written) for i, (written, _) in enumerate(CASES)]
    if form == "json":
        upstream.page(project, json_page(project, [entry(name, written) for name, written in files]))
    else:
        links = "".join(f'<a href="/packages/{name}#sha256={SHA}" data-provenance="{html.escape(written)}">{name}</a>\n'
                        for name, written in files)
        upstream.page(project, f"<!DOCTYPE html><html><body>{links}</body></html>", "text/html")
    from_json, from_html = served(server, project)
    expected = {name: want and want.format(origin=origin(upstream), project=project)
                for (name, _), (_, want) in zip(files, CASES)}
    assert from_json == expected  # every file kept, each provenance as resolved, or none
    assert from_html == expected


def test_a_relative_provenance_is_bounded_as_resolved(hostile):
    """8192 bytes as written resolve past 8192: dropped, the file kept."""
    server, upstream = hostile
    upstream.page("rel", json_page("rel", [entry("rel-1.0.tar.gz", "p" * 8192)]))
    from_json, from_html = served(server, "rel")
    assert from_json == {"rel-1.0.tar.gz": None}
    assert from_html == from_json


def based_page(base: str, links: int, prefix: str = "amp") -> str:
    anchors = "".join(f'<a href="/packages/{prefix}-1.{i}.tar.gz#sha256={SHA}" data-provenance="p">'
                      f"{prefix}-1.{i}.tar.gz</a>\n" for i in range(links))
    return f'<!DOCTYPE html><html><head><base href="{base}"></head><body>{anchors}</body></html>'


@pytest.mark.parametrize("base_bytes", [60000, 8000])
def test_a_long_base_href_does_not_multiply_into_every_provenance(hostile, base_bytes):
    """A <base href> past 8192 bytes refuses the page; one under it, repeated by 150 relative
    provenances into megabytes, passes the page's budget for resolved URLs and refuses it too."""
    server, upstream = hostile
    page = based_page(f'{origin(upstream)}/{"b" * base_bytes}/', 150)
    assert len(page) < PAGE_LIMIT
    upstream.page("amp", page, "text/html")
    assert_refused_and_not_kept(server, upstream, "amp")


def test_a_short_base_href_serves_a_page_linear_in_what_upstream_sent(hostile):
    server, upstream = hostile
    page = based_page(f'{origin(upstream)}/{"b" * 200}/', 150, "fine")
    upstream.page("fine", page, "text/html")
    status, body = get(server.url + "simple/fine/")
    assert status == 200, body
    files = json.loads(body)["files"]
    assert len(files) == 150
    assert {f["provenance"] for f in files} == {f'{origin(upstream)}/{"b" * 200}/p'}
    # what the resolved links add stays within the page's budget: twice its size
    assert sum(len(f["provenance"]) for f in files) < 2 * len(page)


def test_provenance_at_the_limit_on_every_file_stays_within_the_page_limit(hostile):
    """Every file with an 8192-byte provenance: the page is refused past the limit, and the page
    served just under it is of the order of what upstream sent."""
    server, upstream = hostile
    many = [entry(f"big-1.{i}.tar.gz", LONG) for i in range(11)]
    page = json_page("big", many)
    assert len(page) < PAGE_LIMIT
    upstream.page("big", page)
    status, body = get(server.url + "simple/big/")
    assert status == 200 and len(body) < 2 * len(page)
    assert [f["provenance"] for f in json.loads(body)["files"]] == [LONG] * 11
    upstream.page("bigger", json_page("bigger", [entry(f"bigger-1.{i}.tar.gz", LONG) for i in range(13)]))
    assert_refused_and_not_kept(server, upstream, "bigger")


@pytest.mark.parametrize("value", ["1", "0", "true", "false", "{}", '{"url": "https://h.example/"}', '["https://h.example/"]'])
def test_a_provenance_of_another_json_type_refuses_the_page(hostile, value):
    server, upstream = hostile
    page = json_page("typed", [entry("typed-1.0.tar.gz", "__P__")]).replace('"__P__"', value)
    upstream.page("typed", page)
    assert_refused_and_not_kept(server, upstream, "typed")


@pytest.mark.parametrize("body", [
    '{"meta": {"api-version": "1.1"}, "name": "dup", "files": [{"filename": "dup-1.0.tar.gz", "url": '
    '"/packages/dup-1.0.tar.gz", "hashes": {"sha256": "' + SHA + '"}, "provenance": "https://a.example/", '
    '"provenance": "https://b.example/"}]}',
    f'<a href="/packages/dup-1.0.tar.gz#sha256={SHA}" data-provenance="https://a.example/" '
    'DATA-Provenance="https://b.example/">dup-1.0.tar.gz</a>',
], ids=["json-key-twice", "html-attribute-twice"])
def test_a_provenance_given_twice_for_one_file_refuses_the_page(hostile, body):
    server, upstream = hostile
    upstream.page("dup", body, JSON_TYPE if body.startswith("{") else "text/html")
    assert_refused_and_not_kept(server, upstream, "dup")


def test_the_same_file_twice_keeps_the_first_provenance_and_a_left_out_file_shows_none(hostile):
    server, upstream = hostile
    upstream.page("twice", json_page("twice", [
        entry("twice-1.0.tar.gz", "https://first.example/p"), entry("twice-1.0.tar.gz", "https://second.example/p"),
        entry("twice-1.0.tar.gz", None), entry("other-1.0.tar.gz", "https://leftout.example/p"),
        entry("twice-2.0.tar.gz", "https://nohash.example/p", sha256="nothex")]))
    status, body = get(server.url + "simple/twice/")
    assert status == 200
    page = json.loads(body)
    assert [(f["filename"], f.get("provenance")) for f in page["files"]] == [("twice-1.0.tar.gz", "https://first.example/p")]
    for host in (b"second.example", b"leftout.example", b"nohash.example"):
        assert host not in body and host not in get(server.url + "simple/twice/", HTML_TYPE)[1]


def test_an_html_provenance_with_a_reference_this_index_does_not_decode_is_dropped_and_the_file_kept(hostile):
    """Another attribute with a named reference other than the five leaves the link out (pip might
    read it otherwise); pip never reads data-provenance, so only it goes. &amp; and numeric ones decode."""
    server, upstream = hostile
    upstream.page("refs", f'<a href="/packages/refs-1.0.tar.gz#sha256={SHA}" data-provenance="https://h.example/&copy">'
                          f'refs-1.0.tar.gz</a><a href="/packages/refs-2.0.tar.gz#sha256={SHA}" '
                          'data-provenance="https://h.example/a&amp;b&#x3D;&#39;c">refs-2.0.tar.gz</a>', "text/html")
    from_json, from_html = served(server, "refs")
    assert from_json == from_html == {"refs-1.0.tar.gz": None, "refs-2.0.tar.gz": "https://h.example/a&b='c"}


def test_an_owned_name_never_shows_upstreams_provenance(tmp_path, wheelhouse_bin, start_server):
    upstream = HostileUpstream(tmp_path / "tls")
    try:
        data = tmp_path / "data"
        assert ingest(wheelhouse_bin, data, build_wheel(tmp_path / "farm", "owned", "1.0")).returncode == 0
        reserved = subprocess.run([str(wheelhouse_bin), "reserve", "--data", str(data), "kept-*"],
                                  capture_output=True, text=True, timeout=60)
        assert reserved.returncode == 0, reserved.stderr
        for project in ("owned", "kept-name"):
            upstream.page(project, json_page(project, [entry(f"{project.replace('-', '_')}-9.0.tar.gz",
                                                             "https://attacker.example/prov")]))
        server = start_server(data, *wheelhouse_flags(upstream.ca, {"evil": upstream.url}))
        for spelling in ("owned", "Owned", "kept-name", "KEPT.name"):
            for accept in (JSON_TYPE, HTML_TYPE):
                status, body = get(server.url + f"simple/{spelling}/", accept)
                assert status in (200, 404) and b"attacker.example" not in body and b"9.0.tar.gz" not in body
        assert not [line for line in upstream.log if "owned" in line or "kept" in line]
    finally:
        upstream.stop()


def test_pip_installs_through_one_url_with_provenance_present(tmp_path, start_server, pip):
    upstream = HostileUpstream(tmp_path / "tls")
    try:
        wheel = build_wheel(tmp_path / "farm", "provpip", "1.0", files={"provpip/__init__.py": "OK = 1\n"})
        data = wheel.read_bytes()
        upstream.file(wheel.name, data)
        upstream.page("provpip", json_page("provpip", [
            {**entry(wheel.name, "/integrity/provpip/1.0/x/provenance", hashlib.sha256(data).hexdigest()),
             "size": len(data)}, entry("provpip-2.0.tar.gz", "javascript:alert(1)")]))  # never fetched: binary only
        server = start_server(tmp_path / "data", *wheelhouse_flags(upstream.ca, {"evil": upstream.url}))
        target = tmp_path / "site"
        pip("install", "--index-url", server.url + "simple/", "--target", str(target), "--only-binary", ":all:",
            "provpip")
        assert (target / "provpip" / "__init__.py").read_text() == "OK = 1\n"
        assert not [line for line in upstream.log if "integrity" in line]  # the index never fetches it
    finally:
        upstream.stop()
