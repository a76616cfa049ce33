#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/metadata/core_metadata.hpp"

using wheelhouse::error_kind;
using wheelhouse::metadata::core_metadata;
using wheelhouse::metadata::parse_core_metadata;

namespace {

// The METADATA files below are written from memory of the real wheels' files, cut short where
// they repeat themselves.

constexpr std::string_view flash_attn_2_8_3 = R"(Metadata-Version: 2.4
Name: flash_attn
Version: 2.8.3
Summary: Flash Attention: Fast and Memory-Efficient Exact Attention
Home-page: https://github.com/Dao-AILab/flash-attention
Author: Tri Dao
Author-email: tri@tridao.me
Classifier: Programming Language :: Python :: 3
Classifier: License :: OSI Approved :: BSD License
Classifier: Operating System :: Unix
Requires-Python: >=3.9
Description-Content-Type: text/markdown
License-File: LICENSE
License-File: AUTHORS
Requires-Dist: torch
Requires-Dist: einops
Dynamic: author
Dynamic: author-email
Dynamic: classifier
Dynamic: description
Dynamic: description-content-type
Dynamic: home-page
Dynamic: license-file
Dynamic: requires-dist
Dynamic: requires-python
Dynamic: summary

# FlashAttention
This repository provides the official implementation of FlashAttention and
FlashAttention-2 from the
following papers.

**FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness**  
Tri Dao, Daniel Y. Fu, Stefano Ermon, Atri Rudra, Christopher Ré  
Paper: https://arxiv.org/abs/2205.14135  

## Installation and features
```sh
pip install flash-attn --no-build-isolation
```
)";

constexpr std::string_view numpy_2_1_3 = R"(Metadata-Version: 2.1
Name: numpy
Version: 2.1.3
Summary: Fundamental package for array computing in Python
Author: Travis E. Oliphant et al.
Maintainer-Email: NumPy Developers <numpy-discussion@python.org>
License: Copyright (c) 2005-2024, NumPy Developers.
        All rights reserved.
        
        Redistribution and use in source and binary forms, with or without
        modification, are permitted provided that the following conditions are
        met:
        
            * Redistributions of source code must retain the above copyright
               notice, this list of conditions and the following disclaimer.
Classifier: Development Status :: 5 - Production/Stable
Classifier: Intended Audience :: Science/Research
Classifier: Intended Audience :: Developers
Classifier: License :: OSI Approved :: BSD License
Classifier: Programming Language :: C
Classifier: Programming Language :: Python
Classifier: Programming Language :: Python :: 3
Classifier: Programming Language :: Python :: 3.10
Classifier: Programming Language :: Python :: 3.11
Classifier: Programming Language :: Python :: 3.12
Classifier: Programming Language :: Python :: 3.13
Classifier: Programming Language :: Python :: 3 :: Only
Classifier: Programming Language :: Python :: Implementation :: CPython
Classifier: Topic :: Software Development
Classifier: Topic :: Scientific/Engineering
Classifier: Typing :: Typed
Classifier: Operating System :: Microsoft :: Windows
Classifier: Operating System :: POSIX
Classifier: Operating System :: Unix
Classifier: Operating System :: MacOS
Project-URL: homepage, https://numpy.org
Project-URL: documentation, https://numpy.org/doc/
Project-URL: source, https://github.com/numpy/numpy
Project-URL: download, https://pypi.org/project/numpy/#files
Project-URL: tracker, https://github.com/numpy/numpy/issues
Project-URL: release notes, https://numpy.org/doc/stable/release
Requires-Python: >=3.10
Description-Content-Type: text/markdown

<h1 align="center">
<img src="https://raw.githubusercontent.com/numpy/numpy/main/branding/logo/primary/numpylogo.svg" width="300">
</h1><br>

NumPy is the fundamental package for scientific computing with Python.
)";

constexpr std::string_view torch_2_8_0 = R"(Metadata-Version: 2.4
Name: torch
Version: 2.8.0+cu128
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
Home-page: https://pytorch.org/
Download-URL: https://github.com/pytorch/pytorch/tags
Author: PyTorch Team
Author-email: packages@pytorch.org
License: BSD-3-Clause
Keywords: pytorch,machine learning
Classifier: Development Status :: 5 - Production/Stable
Classifier: Intended Audience :: Developers
Classifier: Intended Audience :: Education
Classifier: Intended Audience :: Science/Research
Classifier: Topic :: Scientific/Engineering
Classifier: Topic :: Scientific/Engineering :: Mathematics
Classifier: Topic :: Scientific/Engineering :: Artificial Intelligence
Classifier: Topic :: Software Development
Classifier: Topic :: Software Development :: Libraries
Classifier: Topic :: Software Development :: Libraries :: Python Modules
Classifier: Programming Language :: C++
Classifier: Programming Language :: Python :: 3
Classifier: Programming Language :: Python :: 3.9
Classifier: Programming Language :: Python :: 3.10
Classifier: Programming Language :: Python :: 3.11
Classifier: Programming Language :: Python :: 3.12
Classifier: Programming Language :: Python :: 3.13
Requires-Python: >=3.9.0
Description-Content-Type: text/markdown
License-File: LICENSE
License-File: NOTICE
Requires-Dist: filelock
Requires-Dist: typing-extensions>=4.10.0
Requires-Dist: setuptools; python_version >= "3.12"
Requires-Dist: sympy>=1.13.3
Requires-Dist: networkx
Requires-Dist: jinja2
Requires-Dist: fsspec
Requires-Dist: nvidia-cuda-nvrtc-cu12==12.8.93; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cuda-cupti-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cufft-cu12==11.3.3.83; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-curand-cu12==10.3.9.90; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cusolver-cu12==11.7.3.90; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cusparse-cu12==12.5.8.93; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cusparselt-cu12==0.7.1; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-nccl-cu12==2.27.3; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-nvtx-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-nvjitlink-cu12==12.8.93; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cufile-cu12==1.13.1.3; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: triton==3.4.0; platform_system == "Linux" and platform_machine == "x86_64"
Provides-Extra: opt-einsum
Requires-Dist: opt-einsum>=3.3; extra == "opt-einsum"
Provides-Extra: optree
Requires-Dist: optree>=0.13.0; extra == "optree"
Provides-Extra: pyyaml
Requires-Dist: pyyaml; extra == "pyyaml"
Dynamic: author
Dynamic: author-email
Dynamic: classifier
Dynamic: description
Dynamic: description-content-type
Dynamic: download-url
Dynamic: home-page
Dynamic: keywords
Dynamic: license
Dynamic: license-file
Dynamic: provides-extra
Dynamic: requires-dist
Dynamic: requires-python
Dynamic: summary

![PyTorch Logo](https://github.com/pytorch/pytorch/raw/main/docs/source/_static/img/pytorch-logo-dark.png)

--------------------------------------------------------------------------------

PyTorch is a Python package that provides two high-level features:
- Tensor computation (like NumPy) with strong GPU acceleration
- Deep neural networks built on a tape-based autograd system
)";

// distutils' PKG-INFO style: the description folded into a header with 8 spaces, blank lines
// as 8 spaces, more headers after it.
constexpr std::string_view pyasn1_0_1_9 = "Metadata-Version: 1.1\n"
                                          "Name: pyasn1\n"
                                          "Version: 0.1.9\n"
                                          "Summary: ASN.1 types and codecs\n"
                                          "Home-page: http://sourceforge.net/projects/pyasn1/\n"
                                          "Author: Ilya Etingof <ilya@glas.net>\n"
                                          "Author-email: ilya@glas.net\n"
                                          "License: BSD\n"
                                          "Description: A pure-Python implementation of ASN.1 types and DER/BER/CER codecs (X.208).\n"
                                          "        \n"
                                          "        Usage\n"
                                          "        -----\n"
                                          "        \n"
                                          "            >>> from pyasn1.type import univ\n"
                                          "        \n"
                                          "Platform: any\n"
                                          "Classifier: Development Status :: 5 - Production/Stable\n"
                                          "Classifier: License :: OSI Approved :: BSD License\n";

std::string with_crlf(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

core_metadata parsed(std::string_view text) {
    auto result = parse_core_metadata(text);
    if (!result) FAIL(result.error().message);
    return std::move(result).value();
}

}  // namespace

TEST_CASE("metadata: flash-attn 2.8.3, multi-use fields in order and a Markdown body", "[metadata]") {
    const core_metadata metadata = parsed(flash_attn_2_8_3);
    CHECK(metadata.metadata_version() == "2.4");
    CHECK(metadata.name() == "flash_attn");
    CHECK(metadata.version() == "2.8.3");
    CHECK(metadata.summary() == "Flash Attention: Fast and Memory-Efficient Exact Attention");
    CHECK(metadata.requires_python() == ">=3.9");
    CHECK(metadata.get_all("Classifier") ==
          std::vector<std::string_view>{"Programming Language :: Python :: 3",
                                        "License :: OSI Approved :: BSD License", "Operating System :: Unix"});
    CHECK(metadata.get_all("License-File") == std::vector<std::string_view>{"LICENSE", "AUTHORS"});
    CHECK(metadata.get_all("requires-dist") == std::vector<std::string_view>{"torch", "einops"});
    CHECK(metadata.get_all("Dynamic").size() == 10);
    CHECK(metadata.fields.size() == 26);
    CHECK(metadata.fields.front() == std::pair<std::string, std::string>{"Metadata-Version", "2.4"});
    CHECK(metadata.fields.back() == std::pair<std::string, std::string>{"Dynamic", "summary"});
    // The body is kept as written: Markdown's two-space line breaks, non-ASCII, code fences.
    const auto body_start = flash_attn_2_8_3.find("\n\n# FlashAttention") + 2;
    CHECK(metadata.description == flash_attn_2_8_3.substr(body_start));
    CHECK(metadata.description.find("Christopher Ré  \n") != std::string::npos);
    CHECK_FALSE(metadata.get("Description"));
}

TEST_CASE("metadata: numpy 2.1.3, a folded License keeps its lines and Project-URLs their order", "[metadata]") {
    const core_metadata metadata = parsed(numpy_2_1_3);
    CHECK(metadata.name() == "numpy");
    CHECK(metadata.version() == "2.1.3");
    CHECK(metadata.get("license") == "Copyright (c) 2005-2024, NumPy Developers.\n"
                                     "All rights reserved.\n"
                                     "\n"
                                     "Redistribution and use in source and binary forms, with or without\n"
                                     "modification, are permitted provided that the following conditions are\n"
                                     "met:\n"
                                     "\n"
                                     "    * Redistributions of source code must retain the above copyright\n"
                                     "       notice, this list of conditions and the following disclaimer.");
    CHECK(metadata.get("Maintainer-email") == "NumPy Developers <numpy-discussion@python.org>");
    CHECK(metadata.get_all("Classifier").size() == 20);
    CHECK(metadata.get_all("Classifier").back() == "Operating System :: MacOS");
    CHECK(metadata.get_all("Project-URL") ==
          std::vector<std::string_view>{"homepage, https://numpy.org", "documentation, https://numpy.org/doc/",
                                        "source, https://github.com/numpy/numpy",
                                        "download, https://pypi.org/project/numpy/#files",
                                        "tracker, https://github.com/numpy/numpy/issues",
                                        "release notes, https://numpy.org/doc/stable/release"});
    CHECK(metadata.requires_python() == ">=3.10");
    CHECK(metadata.description.rfind("<h1 align=\"center\">\n", 0) == 0);
    CHECK(metadata.description.find("NumPy is the fundamental package for scientific computing with Python.\n") !=
          std::string::npos);
}

TEST_CASE("metadata: torch 2.8.0+cu128, many Requires-Dist with markers and extras", "[metadata]") {
    const core_metadata metadata = parsed(torch_2_8_0);
    CHECK(metadata.name() == "torch");
    CHECK(metadata.version() == "2.8.0+cu128");
    CHECK(metadata.requires_python() == ">=3.9.0");
    const auto requirements = metadata.get_all("Requires-Dist");
    REQUIRE(requirements.size() == 25);
    CHECK(requirements[0] == "filelock");
    CHECK(requirements[2] == "setuptools; python_version >= \"3.12\"");
    CHECK(requirements[10] == "nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and platform_machine == \"x86_64\"");
    CHECK(requirements[21] == "triton==3.4.0; platform_system == \"Linux\" and platform_machine == \"x86_64\"");
    CHECK(requirements[24] == "pyyaml; extra == \"pyyaml\"");
    CHECK(metadata.get_all("Provides-Extra") == std::vector<std::string_view>{"opt-einsum", "optree", "pyyaml"});
    CHECK(metadata.get_all("Classifier").size() == 17);
    CHECK(metadata.get_all("DYNAMIC").size() == 14);
    CHECK(metadata.get("Keywords") == "pytorch,machine learning");
    CHECK(metadata.get("Not-A-Field") == std::nullopt);
    CHECK(metadata.get_all("Not-A-Field").empty());
}

TEST_CASE("metadata: \\r\\n line endings read as \\n", "[metadata]") {
    for (std::string_view text : {flash_attn_2_8_3, numpy_2_1_3, torch_2_8_0, pyasn1_0_1_9}) {
        const core_metadata from_lf = parsed(text);
        const core_metadata from_crlf = parsed(with_crlf(text));
        CHECK(from_crlf.fields == from_lf.fields);
        CHECK(from_crlf.description == from_lf.description);
    }
}

// fuzz/core_metadata_fuzz: a stray "\r" before a line end stayed in the value or description, and
// the file written back from them read differently ("\r\r\n" became "\r\n", then "\n").
TEST_CASE("metadata: carriage returns before a line end go with it", "[metadata]") {
    const core_metadata metadata =
        parsed("Metadata-Version: 2.4\r\nName: a \r \r\r\nVersion: 1\r\nLicense: MIT\r\r\n  folded\r\r\r\n\r\r\n"
               "body \r\r\nline\rkept\r\n");
    CHECK(metadata.name() == "a");
    CHECK(metadata.get("License") == std::optional<std::string_view>("MIT\nfolded"));
    CHECK(metadata.description == "body \nline\rkept\n");
    const core_metadata again = parsed("Metadata-Version: 2.4\nName: a\nVersion: 1\nLicense: MIT\n  folded\n\n" +
                                       metadata.description);
    CHECK(again.fields == metadata.fields);
    CHECK(again.description == metadata.description);
}

TEST_CASE("metadata: a Description folded into a header", "[metadata]") {
    const core_metadata metadata = parsed(pyasn1_0_1_9);
    CHECK(metadata.description == "A pure-Python implementation of ASN.1 types and DER/BER/CER codecs (X.208).\n"
                                  "\n"
                                  "Usage\n"
                                  "-----\n"
                                  "\n"
                                  "    >>> from pyasn1.type import univ");
    CHECK(metadata.get("Description") == metadata.description);
    CHECK(metadata.get("Platform") == "any");  // the header after the folded one is its own
    CHECK(metadata.get_all("Classifier").size() == 2);

    // The specification's form: 7 spaces and a pipe before every continuation line.
    const core_metadata piped = parsed("Metadata-Version: 1.2\n"
                                       "Name: legacy\n"
                                       "Version: 0.3\n"
                                       "Description: First paragraph.\n"
                                       "       |\n"
                                       "       |    indented code\n"
                                       "       |Last line.\n");
    CHECK(piped.description == "First paragraph.\n\n    indented code\nLast line.");

    // 8 spaces and a pipe, as some tools wrote it.
    const core_metadata eight_and_pipe = parsed("Metadata-Version: 1.1\nName: legacy\nVersion: 0.3\n"
                                                "Description: one\n        |two\n        |  three\n");
    CHECK(eight_and_pipe.description == "one\ntwo\n  three");

    // A tab folds a header too; the line break stays, the tab goes.
    const core_metadata tabbed = parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nSummary: Tensors and\n\tDynamic\n");
    CHECK(tabbed.summary() == "Tensors and\nDynamic");

    // A body and a Description header: the body is the description.
    const core_metadata both = parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nDescription: old\n\nnew body\n");
    CHECK(both.description == "new body\n");
    CHECK(both.get("Description") == "old");
}

TEST_CASE("metadata: the edges of what is accepted", "[metadata]") {
    SECTION("a byte order mark, trailing spaces, no final newline") {
        const core_metadata metadata = parsed("\xEF\xBB\xBFMetadata-Version: 2.1  \nName:   spaced  \nVersion:1.0");
        CHECK(metadata.metadata_version() == "2.1");
        CHECK(metadata.name() == "spaced");
        CHECK(metadata.version() == "1.0");
        CHECK(metadata.description.empty());
    }
    SECTION("header-like lines in the body are description") {
        const core_metadata metadata = parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\n\nName: not a header\n\n");
        CHECK(metadata.get_all("Name").size() == 1);
        CHECK(metadata.description == "Name: not a header\n\n");
    }
    SECTION("a whitespace-only line continues a header; only an empty line ends them") {
        const core_metadata metadata = parsed("Metadata-Version: 2.1\nName: x\nLicense: MIT\n    \nVersion: 1\n");
        CHECK(metadata.get("License") == "MIT");
        CHECK(metadata.version() == "1");
    }
    SECTION("a value that starts on the line below its header") {
        const core_metadata metadata =
            parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nLicense:\n        MIT License\n        \n        Copyright\n");
        CHECK(metadata.get("License") == "MIT License\n\nCopyright");
    }
    SECTION("a value that starts on a line indented deeper than the next") {
        // fuzz/core_metadata_fuzz: the value started with blanks, which no header line can hold.
        const core_metadata metadata =
            parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nRequires-Dist:\n        |\n    o   C |pyright\n");
        CHECK(metadata.get("Requires-Dist") == "|\no   C |pyright");
        // ... or whose first line holds only blanks once the pipe is gone: it started with "\n".
        const core_metadata blank_first =
            parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nRequires-Dist:\n\t\n        | \n        | x\n");
        CHECK(blank_first.get("Requires-Dist") == "x");
    }
    SECTION("unknown fields are kept") {
        const core_metadata metadata = parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nX-Custom: yes\n");
        CHECK(metadata.get("x-custom") == "yes");
    }
}

TEST_CASE("metadata: malformed files are refused with the line and the reason", "[metadata]") {
    const std::vector<std::pair<std::string_view, std::string_view>> table = {
        {"Metadata-Version: 2.1\nName: x\nVersion 1.0\n",
         "METADATA line 3 is not a 'Name: value' header: 'Version 1.0' has no ':' (the description goes after an "
         "empty line)"},
        {"  Name: x\nVersion: 1\n",
         "METADATA line 1 starts with whitespace, which continues a header, but no header comes before it"},
        {"Metadata-Version: 2.1\nName : x\nVersion: 1\n",
         "METADATA line 2: 'Name ' is not a header name (no spaces or control characters before the ':')"},
        {"Metadata-Version: 2.1\n: x\n", "METADATA line 2: '' is not a header name (no spaces or control characters "
                                         "before the ':')"},
        {"Metadata-Version: 2.1\nName: x\n", "METADATA lacks the required Version header"},
        {"Name: x\n", "METADATA lacks the required Metadata-Version and Version headers"},
        {"", "METADATA lacks the required Metadata-Version, Name and Version headers"},
        {"\nName: x\nVersion: 1\n", "METADATA lacks the required Metadata-Version, Name and Version headers"},
        {"Metadata-Version: 2.1\nName:\nVersion: 1\n", "METADATA's Name header is empty"},
        {"Metadata-Version: 2.1\nName: x\nVersion: 1\nSummary: s\nversion: 2\n",
         "METADATA line 5 is a second Version header (the first is on line 3)"},
        {"Metadata-Version: 2.1\nName: caf\xE9\nVersion: 1\n",
         "METADATA is not valid UTF-8: a malformed 3-byte character at byte offset 31 (line 2)"},
        {"Metadata-Version: 2.1\nName: x\nVersion: 1\xE2\x82",
         "METADATA is not valid UTF-8: the text ends inside a 3-byte character at byte offset 40 (line 3)"},
        {"Metadata-Version: 2.1\nName: \xC0\xAF\nVersion: 1\n",
         "METADATA is not valid UTF-8: byte 0xc0 cannot start a character at byte offset 28 (line 2)"},
        {"Metadata-Version: 2.1\nName: \xED\xA0\x80\nVersion: 1\n",
         "METADATA is not valid UTF-8: a malformed 3-byte character at byte offset 28 (line 2)"},
        {"Metadata-Version: 2.1\nName: \xF4\x90\x80\x80\nVersion: 1\n",
         "METADATA is not valid UTF-8: a malformed 4-byte character at byte offset 28 (line 2)"},
        {"Metadata-Version: 2.1\nName: x\nVersion: 1\n\nbody \xFF\n",
         "METADATA is not valid UTF-8: byte 0xff cannot start a character at byte offset 47 (line 5)"},
    };
    for (const auto& [text, message] : table) {
        CAPTURE(text);
        const auto result = parse_core_metadata(text);
        REQUIRE_FALSE(result);
        CHECK(result.error().kind == error_kind::invalid);
        CHECK(result.error().message == message);
    }
    // Long lines are quoted short, cut between characters.
    const std::string long_line = "Metadata-Version: 2.1\n" + std::string(58, 'a') + "éééé no colon\n";
    const auto result = parse_core_metadata(long_line);
    REQUIRE_FALSE(result);
    CHECK(result.error().message ==
          "METADATA line 2 is not a 'Name: value' header: '" + std::string(58, 'a') +
              "é...' has no ':' (the description goes after an empty line)");
}

TEST_CASE("metadata: valid UTF-8 of every length is accepted", "[metadata]") {
    const core_metadata metadata =
        parsed("Metadata-Version: 2.1\nName: x\nVersion: 1\nAuthor: Ré 日本 \xF0\x9F\x90\x8D \xF4\x8F\xBF\xBF\n");
    CHECK(metadata.get("Author") == "Ré 日本 \xF0\x9F\x90\x8D \xF4\x8F\xBF\xBF");
}
