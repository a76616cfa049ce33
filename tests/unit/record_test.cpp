#include <catch2/catch.hpp>

#include "wheelhouse/ingest/record.hpp"

using namespace wheelhouse;
using crypto::hash_algorithm;

TEST_CASE("record: rows as wheel and setuptools write them", "[record]") {
    const auto text =
        "flash_attn/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\r\n"
        "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,sha384=abc,123456789\r\n"
        "\"odd,name.py\",sha512=xyz==,7\r\n"
        "\r\n"
        "flash_attn-2.8.3.dist-info/RECORD,,\r\n";
    auto rows = ingest::parse_record(text);
    REQUIRE(rows);
    REQUIRE(rows->size() == 4);
    CHECK((*rows)[0].path == "flash_attn/__init__.py");
    CHECK((*rows)[0].algorithm == hash_algorithm::sha256);
    CHECK((*rows)[0].digest == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    CHECK((*rows)[0].size == std::optional<std::uint64_t>(0));
    CHECK((*rows)[1].algorithm == hash_algorithm::sha384);
    CHECK((*rows)[1].size == std::optional<std::uint64_t>(123456789));
    CHECK((*rows)[2].path == "odd,name.py");
    CHECK((*rows)[2].digest == "xyz");  // padding tolerated
    CHECK((*rows)[3].path == "flash_attn-2.8.3.dist-info/RECORD");
    CHECK_FALSE((*rows)[3].algorithm.has_value());
    CHECK_FALSE((*rows)[3].size.has_value());
    CHECK((*rows)[3].line == 5);
}

TEST_CASE("record: quoted fields with doubled quotes and a last line without newline", "[record]") {
    auto rows = ingest::parse_record("\"a \"\"b\"\".py\",sha256=x,1\nc.py,sha256=y,2");
    REQUIRE(rows);
    REQUIRE(rows->size() == 2);
    CHECK((*rows)[0].path == "a \"b\".py");
    CHECK((*rows)[1].path == "c.py");
}

TEST_CASE("record: malformed rows are refused with their line", "[record]") {
    const std::pair<const char*, const char*> table[] = {
        {"a.py,sha256=x\n", "RECORD line 1: has 2 fields"},
        {"a.py,sha256=x,1\nb.py,sha256=y,2,extra\n", "RECORD line 2: has 4 fields"},
        {"a.py,md5=x,1\n", "a.py is hashed with md5; wheels must use sha256 or stronger"},
        {"a.py,sha1=x,1\n", "a.py is hashed with sha1"},
        {"a.py,sha256,1\n", "the hash of a.py is \"sha256\""},
        {"a.py,=abc,1\n", "the hash of a.py is \"=abc\""},
        {"a.py,sha256=,1\n", "the hash of a.py is \"sha256=\""},
        // fuzz/record_fuzz: padding alone was taken for an empty digest, which RECORD cannot write back.
        {"a.py,sha256==,1\n", "the hash of a.py is \"sha256==\""},
        {"a.py,sha512===,1\n", "the hash of a.py is \"sha512===\""},
        {"a.py,sha256=x,12kB\n", "the size of a.py is \"12kB\""},
        {"a.py,sha256=x,-1\n", "the size of a.py is \"-1\""},
        {"a.py,sha256=x,1\na.py,sha256=x,1\n", "RECORD line 2: lists a.py a second time"},
        {",sha256=x,1\n", "RECORD line 1: has an empty path"},
        {"\"a.py,sha256=x,1\n", "RECORD line 1: a quoted field is never closed"},
    };
    for (const auto& [text, message] : table) {
        CAPTURE(text);
        auto rows = ingest::parse_record(text);
        REQUIRE_FALSE(rows);
        CHECK(rows.error().kind == error_kind::invalid);
        CHECK_THAT(rows.error().message, Catch::Contains(message));
    }
}
