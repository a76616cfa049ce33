#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: `fuzz/seeds.py OUT` makes OUT/<target>/ for each
target, from the test tables in tests/data/ (filenames, versions), small wheels built the way
the end-to-end tests build them, and hand-written examples of each format. Seeds only start the
search; libFuzzer's own corpus (README, "Fuzzing") grows from them.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import pathlib
import struct
import sys
import tarfile
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import tables  # noqa: E402
import wheelbuilder  # noqa: E402


def column(table: str, name: str) -> list[str]:
    return [row[name] for row in tables.read_table(table) if row.get(name)]


def versions() -> list[str]:
    found = column("version_normalizations.tsv", "input") + column("version_order.tsv", "version")
    found += column("invalid_versions.tsv", "input")
    for row in tables.read_table("version_ordering.tsv"):
        found.append(row["left"] + "\n" + row["right"])
    return found


def local_labels() -> list[str]:
    labels = ["cu130sm89torch2.10.0", "cu12torch2.7cxx11abiTRUE", "cu128torch2.8", "rocm6.4", "cpu.cxx11.abi",
              "torch2.9.0andhigher", "g1a2b3c4.d20250101", "cuda12.cudnn89", "pt28cu128", "sm80.sm90a", "xpu",
              "gitb98af95", "cpuavx2", "e1560d84"]
    for name in column("wheel_filenames.tsv", "filename"):
        version = name.split("-")[1]
        if "+" in version:
            labels.append(version.split("+", 1)[1])
    return [label + "\n280.129" for label in labels] + ["\n1", "x\n2100.130"]


def selectors() -> list[str]:
    return ["cu130-torch2.10-sm89\ncu130sm89torch2.10.0", "cu12\ncu128torch2.8", "rocm6.4-torch2.7\nrocm6.4",
            "cpu-cxx11abi1\ncpu.cxx11.abi", "torch2.11\ntorch2.9.0andhigher", "xpu", "cu128-sm90a\nsm80.sm90a",
            "cu130-cu128", "cpu-sm89", "torch2.10-cu130"]


METADATA = """Metadata-Version: 2.4
Name: flash-attn
Version: 2.8.3+cu128torch2.8
Summary: Flash Attention: Fast and Memory-Efficient Exact Attention
Requires-Python: >=3.9
Requires-Dist: torch
Requires-Dist: einops; extra == "dev"
License: BSD
        |Copyright
        |
        |second paragraph
Classifier: Programming Language :: Python :: 3

The description, in Markdown.
"""


def metadata() -> list[str]:
    return [METADATA, METADATA.replace("\n", "\r\n"), "\ufeffMetadata-Version: 2.1\nName: a\nVersion: 1\nDescription: x\n  y\n",
            "Metadata-Version: 1.0\nName: b\nVersion: 0\nLicense:\n\tMIT\n\tfolded\n\nbody\r\nline\n"]


def records() -> list[str]:
    return ["a/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
            "a-1.dist-info/METADATA,sha256=AAAA,12\r\na-1.dist-info/RECORD,,\n",
            '"a,b.py",sha512=xyz==,3\n"q""uote",,\n\n', "x,md5=abc,1\n"]


def multipart() -> list[bytes]:
    boundary = b"f3c9a8d0e1b24c7d9a6b5e4f3d2c1b0a"
    body = (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\":action\"\r\n\r\nfile_upload\r\n"
            b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nflash-attn\r\n"
            b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"content\"; filename=\"a-1-py3-none-any.whl\"\r\n"
            b"Content-Type: application/octet-stream\r\n\r\nPK\x03\x04--\r\n-" + boundary[:10] + b"\r\n"
            b"--" + boundary + b"--\r\n")
    curl = b"------------------------d74496d66958873e"
    curl_body = (b"preamble\r\n--" + curl + b"\r\nContent-Disposition: form-data; name=\"content\"; filename=\"x.whl\"\r\n\r\n"
                 b"bytes\r\n--" + curl + b"  \r\nContent-Disposition: form-data; name=\"description\"\r\n"
                 b"Content-Transfer-Encoding: binary\r\n\r\nlong\r\n--" + curl + b"--\r\nepilogue")
    return [b"\x07\x01\x20\x03\nmultipart/form-data; boundary=" + boundary + b"\n" + body,
            b"\x01\nmultipart/form-data; boundary=\"" + curl + b"\"\n" + curl_body,
            b"\x05\x09\nmultipart/form-data; boundary=B\n--B\r\nContent-Disposition: form-data; name=\"a\\\"b\"\r\n\r\nv\r\n--B--"]


def wheels() -> list[bytes]:
    with tempfile.TemporaryDirectory() as folder:
        built = [
            wheelbuilder.build_wheel(folder, "tiny", "1.0"),
            wheelbuilder.build_wheel(folder, "flash-attn", "2.8.3+cu128torch2.8", tags="cp312-cp312-linux_x86_64",
                                     files={"flash_attn/__init__.py": "x = 1\n", "flash_attn/data/": b""}),
            wheelbuilder.build_wheel(folder, "badrecord", "1", unlisted={"extra.txt": "not in RECORD"}),
        ]
        out = [path.read_bytes() for path in built]
    stored = io.BytesIO()
    with zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as archive:
        metadata_text = b"Metadata-Version: 2.1\nName: s\nVersion: 1\n"
        wheel_text = b"Wheel-Version: 1.0\nGenerator: seeds\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        record = ""
        for name, data in (("s-1.dist-info/METADATA", metadata_text), ("s-1.dist-info/WHEEL", wheel_text)):
            archive.writestr(name, data)
            record += f"{name},{wheelbuilder.record_hash(data)},{len(data)}\n"
        archive.writestr("s-1.dist-info/RECORD", record + "s-1.dist-info/RECORD,,\n")
    out.append(stored.getvalue())
    return out


def sdist_filenames() -> list[str]:
    return ["flash_attn-2.8.3.tar.gz", "Flask-2.0.tar.gz", "flash-attn-2.8.3.tar.gz", "foo-1.0-post1.tar.gz",
            "torch-2.10.0+cu130.tar.gz", "demo-1!2.0rc1.post2.dev3.tar.gz", "demo-1.0.zip", "demo-V1.0.TAR.GZ",
            "zope.interface-7.0.tar.gz", "a-1.tar.gz"]


def sdist_tars() -> list[bytes]:
    """Uncompressed tar streams, as the harness gzips them: ustar, pax and GNU long names, links."""
    def tar(entries, fmt) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=fmt) as archive:
            for name, kind, data in entries:
                info = tarfile.TarInfo(name)
                info.type = kind
                if kind == tarfile.SYMTYPE or kind == tarfile.LNKTYPE:
                    info.linkname = data.decode()
                    archive.addfile(info)
                elif kind == tarfile.DIRTYPE:
                    archive.addfile(info)
                else:
                    info.size = len(data)
                    archive.addfile(info, io.BytesIO(data))
        return out.getvalue()
    pkg_info = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: seed\n\n"
    base = [("demo-1.0", tarfile.DIRTYPE, b""), ("demo-1.0/PKG-INFO", tarfile.REGTYPE, pkg_info),
            ("demo-1.0/setup.py", tarfile.REGTYPE, b"from setuptools import setup\nsetup()\n")]
    deep = "demo-1.0/" + "d" * 120 + "/module.py"
    links = [("demo-1.0/alias.py", tarfile.SYMTYPE, b"setup.py"),
             ("demo-1.0/copy.py", tarfile.LNKTYPE, b"demo-1.0/setup.py")]
    chain = [("demo-1.0/a/b/up", tarfile.SYMTYPE, b"../.."), ("demo-1.0/via", tarfile.SYMTYPE, b"a/b/up/setup.py"),
             ("demo-1.0/esc", tarfile.SYMTYPE, b"a/b/up/../.."), ("demo-1.0/esc/pwned.txt", tarfile.REGTYPE, b"x")]
    # The member lines the harness also places straight into an extraction tree.
    lines = (b"d demo-1.0\nf demo-1.0/setup.py\ns demo-1.0/a/up\t..\ns demo-1.0/ln\ta/up/setup.py\n"
             b"h demo-1.0/copy\tdemo-1.0/setup.py\ns demo-1.0/later\tmissing/x\ns demo-1.0/esc\ta/up/../..\n")
    return [tar(base, tarfile.USTAR_FORMAT), tar(base + [(deep, tarfile.REGTYPE, b"x = 1\n")], tarfile.PAX_FORMAT),
            tar(base + [(deep, tarfile.REGTYPE, b"x = 1\n")] + links, tarfile.GNU_FORMAT),
            tar(base + [("demo-1.0/evil", tarfile.SYMTYPE, b"../../etc/passwd")], tarfile.USTAR_FORMAT),
            tar(base + chain, tarfile.PAX_FORMAT), tar(base + [(deep, tarfile.SYMTYPE, b"../setup.py")], tarfile.GNU_FORMAT),
            lines]


def file_names(wheel_filenames: list[str]) -> list[str]:
    """Every kind of name the index serves: wheels, sdists, the .metadata of either, release files."""
    sdists = sdist_filenames()
    return (wheel_filenames + sdists + [name + ".metadata" for name in wheel_filenames[:20] + sdists]
            + ["flash_attn-2.8.3-variants.json", "zope_interface-7.0.post1-variants.json", "a-b-1.0-variants.json",
               "-variants.json", ".metadata", "x.whl.metadata.metadata"])


def zip_ranges() -> list[bytes]:
    plans = [b"\x02\x01\x00\x00\x00\x10\x00\x00\x00\x20\x00\x10", b"\x00\x00\x00\x05\x00\x09\x01\x00\x00\xff\xff",
             b"\x10\x03\x00\x00\x00\x40"]
    archives = wheels()[:2]
    return [plan + b"\n" + archive for plan in plans for archive in archives]


def targets() -> list[str]:
    return ["/simple/", "/simple/flash-attn/", "/files/ab12/flash_attn-2.8.3-py3-none-any.whl.metadata",
            "/api/v1/projects?q=flash&sort=recent&page=2&per_page=50", "/simple/Flash_Attn", "/simple/%66lash/?format=json",
            "/variants/cu130-torch2.10/simple/x/", "/a%2Fb", "/a/../b", "/%00", "/?a=%0A&b", "//x", "/x?q=a+b&q=%2B"]


def conditionals() -> list[bytes]:
    size = struct.pack("<Q", 1000)
    return [size + b"bytes=0-99\n\"abc\"\nW/\"abc\", \"def\"", size + b"bytes=-500\n\"x\"\n*",
            size + b"bytes=900-\n\"t\"\n\"u\"", struct.pack("<Q", 0) + b"bytes=0-\n\"e\"\n",
            size + b"bytes=5-1\n\"q\"\nW/\"q\"", size + b"bytes=0-1,5-6\n\"q\"\n"]


def accepts() -> list[str]:
    return ["application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01",
            "text/html", "*/*", "application/*;q=0.5, text/*", "application/vnd.pypi.simple.latest+json;q=0",
            "text/html;q=0.5, text/html;q=0.9", "json", "pip/23.1 {}"]


def credentials() -> list[str]:
    token = "wh_Zm9vYmFyYmF6cXV4cXV1eA"
    return ["Basic " + base64.b64encode(f"__token__:{token}".encode()).decode(), "Bearer " + token,
            "basic X190b2tlbl9fOg", "Token abc", token, "Basic " + base64.b64encode(b"user:pass").decode(), "QQ==", "QR=="]


def durations() -> list[str]:
    return ["90d\n12h", "1y", "1d12h\n30m", "100y\n1s", "0s", "9223372036854775807s", "5w\n2y"]


def settings() -> list[str]:
    return ['listen = "127.0.0.1:8080"\ndata = "./var"\nthreads = 4\nmax-upload-size = 4294967296\nprivate = true\n'
            'remote-allowed-hosts = ["github.com", "objects.githubusercontent.com"]\nremote-download-mode = "proxy"\n'
            'remote-connect-timeout = 10\ngithub-api-url = "https://ghe.example/api/v3"\n',
            'listen = ":0"\nremote-allowed-hosts = "github.com,api.github.com"\ningest-queue = 16\n',
            "threads = -1\n", 'unknown = 1\n[table]\nx = 1\n', 'listen = "[::1]:9"\naccess-log = "off"\n']


def specifier_sets() -> list[str]:
    found = column("specifier_sets.tsv", "input") + column("invalid_specifier_sets.tsv", "input")
    for row in tables.read_table("specifier_contains.tsv"):
        found.append(row["specifier"] + "\n" + row["version"])
    return found


def requirements() -> list[str]:
    return column("requirements.tsv", "input") + column("invalid_requirements.tsv", "input")


def globs() -> list[str]:
    return ["nunchaku-*\nnunchaku-cu128", "*\n*a", "*b\n*ab", "*-cu12*\ntorch-cu128", "sage?ttention\nsageattention",
            "*a*a*a*b\naaaaaaaaaaaa", "flash-attn\nFlash_Attn", "??*?\nab"]


def variant_metadata() -> list[str]:
    schema = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
    cuda = '{"nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": ["120_real", "90_real"]}}'
    return [
        '{"$schema": "%s", "default-priorities": {"namespace": ["nvidia"]}, "variants": {"cu128": %s}}' % (schema, cuda),
        '{"$schema": "%s", "default-priorities": {"namespace": ["nvidia"]}, "variants": {"null": {}}}' % schema,
        '{"$schema": "%s", "default-priorities": {"namespace": ["x86_64", "blas_lapack"]}, "variants": '
        '{"x8664v3_openblas": {"blas_lapack": {"library": ["openblas"]}, "x86_64": {"level": ["v3"]}}}}' % schema,
        '{"$schema": "%s", "default-priorities": {"namespace": ["a", "a"]}, "variants": {"a": {}, "a": {}}}' % schema,
        '{"$schema": "%s", "default-priorities": {"namespace": ["nvidia"], "feature": {}}, "variants": {}}'
        % schema.replace("0.1.1", "0.1.0"),
    ]


# A public RSA modulus and P-256 point (keys made once for these seeds; their private halves
# were never kept): JWK sets that parse, to start the key-set target from.
SEED_RSA_N = ("vSt_-83poTxzwcd5unX8YeaDY_TSM9o4QgstmFLAJpJ1EgEB5GmgWPXk_DBkZ0qn77IpEZ3iKvcfP6Ciq-l3eFYo1XwYC_PLANM4wIyZ"
              "LNEG2gnX_i7n-ibtWG3COQtoCwK-eUMZSdFN_E7YPQAcbtgbOU7Ps7siPW0lAGuOF2_vi1cChN_70DvuyYkOIwJJ8MBPuOL3fuFdIkuXQgTd"
              "svuttYE-apBd6BIBeNAQnNkaqPyo94ZcHDTS_36grbDcZVszxmDyn-cLHKaPkJKpdEww1Dosx9mSCn3A43ta_W4KUHXw87DCWj4fH4Lj_jN4"
              "L41zSJH9axTRXg4p4taBvw")
SEED_EC_X, SEED_EC_Y = "CER5uPlESfyjWMuSHu6flKw9rFdLwOvhJpy2MB6NvZM", "MPZyZZIjT3qUeI3boh96LrsvQNkcJS8f7QtpFwmRlSg"


def b64url(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def identity_tokens() -> list[str]:
    claims = ('{"iss":"https://token.actions.githubusercontent.com","aud":"wheelhouse","exp":1900000000,'
              '"iat":1899999700,"jti":"5f1b","repository":"Dao-AILab/flash-attention","repository_owner":"Dao-AILab",'
              '"repository_owner_id":"123","job_workflow_ref":"Dao-AILab/flash-attention/.github/workflows/r.yml'
              '@refs/heads/main","ref":"refs/heads/main","sha":"abc"}')
    headers = ['{"alg":"RS256","kid":"k1","typ":"JWT"}', '{"alg":"ES256","kid":"e1"}', '{"alg":"none"}',
               '{"alg":"HS256","kid":"k1"}', '{"alg":"RS256","kid":"k1","crit":["b64"]}', '{"alg":"ES384","kid":"x","alg":"RS256"}']
    return [b64url(h) + "." + b64url(claims) + "." + b64url(bytes(range(64))) for h in headers] + ["a.b.c", "..", ""]


def key_sets() -> list[str]:
    rsa = {"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": SEED_RSA_N, "e": "AQAB"}
    ec = {"kty": "EC", "kid": "e1", "crv": "P-256", "x": SEED_EC_X, "y": SEED_EC_Y}
    return [json.dumps({"keys": [rsa, ec]}), json.dumps({"keys": [rsa, dict(rsa)]}), json.dumps({"keys": [{"kty": "oct", "k": "AA"}]}),
            json.dumps({"issuer": "https://token.actions.githubusercontent.com",
                        "jwks_uri": "https://token.actions.githubusercontent.com/.well-known/jwks"}),
            json.dumps({"issuer": "https://token.actions.githubusercontent.com", "jwks_uri": "https://evil.example/keys"})]


def upstream_pages() -> list[bytes]:
    """Pages of "demo" as PyPI (JSON, first byte even) and PyTorch's index (HTML, odd) write them."""
    sha = "a" * 64
    json_page = ('{"meta":{"api-version":"1.3"},"name":"Demo","versions":["1.0"],"files":[{"filename":'
                 '"demo-1.0-py3-none-any.whl","url":"https://files.example/demo-1.0-py3-none-any.whl","hashes":'
                 '{"sha256":"%s"},"requires-python":">=3.9","size":100,"upload-time":"2025-01-01T00:00:00.000001Z",'
                 '"yanked":"bad","core-metadata":{"sha256":"%s"}},{"filename":"demo-1.0.tar.gz","url":'
                 '"../../packages/demo-1.0.tar.gz","hashes":{"sha256":"%s"},"size":5,"yanked":false,'
                 '"core-metadata":true}],"project-status":{"status":"deprecated","reason":"use demo2"}}' % (sha, sha, sha))
    html_page = ('<!DOCTYPE html><html><head><meta name="pypi:repository-version" content="1.1"><title>Links</title>'
                 '</head><body><h1>Links for demo</h1>\n<a href="/whl/demo-1.0%%2Bcu128-cp312-cp312-linux_x86_64.whl'
                 '#sha256=%s" data-requires-python="&gt;=3.9" data-yanked="" data-core-metadata="sha256=%s">'
                 'demo-1.0+cu128-cp312-cp312-linux_x86_64.whl</a><br/>\n<!-- a comment --><a href=\'Demo-1.0.zip#sha256=%s\'>'
                 'Demo-1.0.zip</a></body></html>' % (sha, sha, sha))
    return [b"\x00" + json_page.encode(), b"\x01" + html_page.encode(),
            b"\x00" + b'{"meta":{"api-version":"1.0"},"name":"demo","files":[]}',
            b"\x01<a href=x>&amp;&#38;&#x26;</a>"]


def corpora() -> dict[str, list[str | bytes]]:
    filenames = column("wheel_filenames.tsv", "filename") + column("invalid_wheel_filenames.tsv", "filename")
    filenames += column("variant_wheel_filenames.tsv", "filename")
    return {
        "pep440_version_fuzz": versions(),
        "pep440_specifier_fuzz": specifier_sets(),
        "pep508_requirement_fuzz": requirements(),
        "auth_glob_fuzz": globs(),
        "pep427_wheel_filename_fuzz": filenames,
        "variants_decode_fuzz": local_labels(),
        "variants_selector_fuzz": selectors(),
        "core_metadata_fuzz": metadata(),
        "pep825_variant_metadata_fuzz": variant_metadata(),
        "record_fuzz": records(),
        "multipart_parser_fuzz": multipart(),
        "wheel_archive_fuzz": wheels(),
        "pep625_sdist_filename_fuzz": sdist_filenames(),
        "distribution_file_name_fuzz": file_names(filenames),
        "sdist_archive_fuzz": sdist_tars(),
        "zip_range_reader_fuzz": zip_ranges(),
        "request_target_fuzz": targets(),
        "http_conditional_fuzz": conditionals(),
        "pep691_negotiation_fuzz": accepts(),
        "auth_credentials_fuzz": credentials(),
        "auth_duration_fuzz": durations(),
        "settings_fuzz": settings(),
        "oidc_token_fuzz": identity_tokens(),
        "oidc_key_set_fuzz": key_sets(),
        "upstream_page_fuzz": upstream_pages(),
        "s3_xml_answer_fuzz": s3_answers(),
        "attest_attestation_fuzz": attestations(),
    }


def attestations() -> list[bytes]:
    """Attestations the harness's fixed trust root verifies: the saved ones."""
    folder = pathlib.Path(__file__).parent / "regressions" / "attest_attestation_fuzz"
    return [path.read_bytes() for path in sorted(folder.iterdir())]


def s3_answers() -> list[str]:
    """Answers as radosgw and S3 write them: a list page, a multipart start, errors."""
    declaration = '<?xml version="1.0" encoding="UTF-8"?>'
    namespace = ' xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
    listing = (f"{declaration}<ListBucketResult{namespace}><Name>wheels</Name><Prefix>blobs/</Prefix>"
               "<KeyCount>1</KeyCount><IsTruncated>true</IsTruncated><NextContinuationToken>abc/def=</NextContinuationToken>"
               "<Contents><Key>blobs/sha256/ab/cd/ab&amp;cd</Key><LastModified>2026-11-28T16:05:09.000Z</LastModified>"
               "<ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size></Contents></ListBucketResult>")
    return [
        listing,
        f"{declaration}<InitiateMultipartUploadResult{namespace}><Bucket>w</Bucket><Key>k</Key>"
        "<UploadId>2~Yt9_cmZ1ySBFq7YEqKiQr7rwN2Rl0AJ</UploadId></InitiateMultipartUploadResult>",
        f"{declaration}<Error><Code>SignatureDoesNotMatch</Code><Message/><RequestId>tx0</RequestId></Error>",
        f"{declaration}<CompleteMultipartUploadResult{namespace}><Location>l</Location><ETag></ETag>"
        "</CompleteMultipartUploadResult>",
        "<!-- c --><r a='1' b = \"x\"><![CDATA[<&>]]>&#65;&#x263A;<?pi?><k/></r>",
    ]


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    for target, seeds in corpora().items():
        folder = out / target
        folder.mkdir(parents=True, exist_ok=True)
        for seed in seeds:
            data = seed if isinstance(seed, bytes) else seed.encode("utf-8")
            (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


if __name__ == "__main__":
    main()
