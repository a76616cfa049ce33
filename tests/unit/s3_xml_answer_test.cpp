#include <catch2/catch.hpp>

#include <string>

#include "wheelhouse/s3/xml_answer.hpp"

using namespace wheelhouse;

TEST_CASE("s3: a ListObjectsV2 page as radosgw answers it", "[s3]") {
    const auto page = s3::list_page_of(
        R"(<?xml version="1.0" encoding="UTF-8"?>)"
        R"(<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>wheels</Name>)"
        "<Prefix>blobs/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>"
        "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
        "<Contents><Key>blobs/sha256/ab/cd/abcd</Key><LastModified>2026-11-28T16:05:09.000Z</LastModified>"
        "<ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size><StorageClass>STANDARD</StorageClass>"
        "</Contents>\n  <Contents><Key>blobs/a&amp;b &#x263A;&#9731;</Key><Size>1073741824</Size></Contents>"
        "</ListBucketResult>\n");
    REQUIRE(page);
    REQUIRE(page->objects.size() == 2);
    CHECK(page->objects[0].key == "blobs/sha256/ab/cd/abcd");
    CHECK(page->objects[0].size == 5);
    CHECK(page->objects[1].key == "blobs/a&b \xE2\x98\xBA\xE2\x98\x83");
    CHECK(page->objects[1].size == 1073741824);
    CHECK(page->next_continuation_token == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");

    const auto last = s3::list_page_of("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
    REQUIRE(last);
    CHECK(last->objects.empty());
    CHECK(last->next_continuation_token.empty());
}

TEST_CASE("s3: errors, upload ids, and answers of the wrong kind", "[s3]") {
    const auto failure = s3::error_of(
        "<?xml version=\"1.0\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message></Message>"
        "<RequestId>tx0000</RequestId></Error>");
    REQUIRE(failure);
    CHECK(failure->code == "SignatureDoesNotMatch");
    const auto not_an_error = s3::error_of("<CompleteMultipartUploadResult><ETag/></CompleteMultipartUploadResult>");
    REQUIRE(not_an_error);
    CHECK(not_an_error->code.empty());

    const auto id = s3::upload_id_of(
        "<InitiateMultipartUploadResult xmlns='http://s3.amazonaws.com/doc/2006-03-01/'><Bucket>w</Bucket>"
        "<Key>k</Key><UploadId>2~Yt9_cmZ1ySBFq7YEqKiQr7rwN2Rl0AJ</UploadId></InitiateMultipartUploadResult>");
    REQUIRE(id);
    CHECK(*id == "2~Yt9_cmZ1ySBFq7YEqKiQr7rwN2Rl0AJ");
    CHECK(s3::upload_id_of("<InitiateMultipartUploadResult></InitiateMultipartUploadResult>").error().message ==
          "the object store began a multipart upload without an UploadId");
    CHECK(s3::upload_id_of("<Error><Code>AccessDenied</Code></Error>").error().message ==
          "the object store answered <Error> where <InitiateMultipartUploadResult> belongs");
    CHECK(!s3::list_page_of("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>"));
    CHECK(!s3::list_page_of("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"));
}

TEST_CASE("s3: a completion is made only by its own answer, and open uploads are listed", "[s3]") {
    // radosgw 16.2 answers an empty ETag; the answer's kind is what counts.
    CHECK(s3::completion_of("<CompleteMultipartUploadResult><ETag></ETag></CompleteMultipartUploadResult>"));
    CHECK(s3::completion_of("").error().message.size() > 0);
    CHECK(s3::completion_of("<Error><Code>InternalError</Code></Error>").error().message ==
          "the object store answered <Error> where <CompleteMultipartUploadResult> belongs");
    CHECK(!s3::completion_of("not xml"));

    const auto open = s3::open_uploads_of(
        "<ListMultipartUploadsResult><Bucket>w</Bucket><Upload><Key>p/blobs/a</Key><UploadId>2~x</UploadId></Upload>"
        "<Upload><Key>p/blobs/a</Key><UploadId>2~y</UploadId></Upload></ListMultipartUploadsResult>");
    REQUIRE(open);
    REQUIRE(open->size() == 2);
    CHECK((*open)[1].key == "p/blobs/a");
    CHECK((*open)[1].upload_id == "2~y");
    CHECK(s3::open_uploads_of("<ListMultipartUploadsResult/>").value().empty());
    CHECK(!s3::open_uploads_of("<ListMultipartUploadsResult><Upload><Key>k</Key></Upload></ListMultipartUploadsResult>"));
}

TEST_CASE("s3: XML this reader refuses, saying where", "[s3]") {
    const std::string deep = std::string(40, '<') + "a>";
    std::string nested;
    for (int i = 0; i < 40; ++i) nested += "<a>";
    for (int i = 0; i < 40; ++i) nested += "</a>";
    const char* refused[] = {
        "",
        "   ",
        "text",
        "<!DOCTYPE lolz [<!ENTITY lol \"lol\">]><a>&lol;</a>",
        "<a>&lol;</a>",
        "<a>&#0;</a>",
        "<a>&#xD800;</a>",
        "<a>&#x110000;</a>",
        "<a>&amp</a>",
        "<a>&;</a>",
        "<a>&#;</a>",
        "<a>&#x;</a>",
        "<a>&#x-1;</a>",
        "<a><b></a></b>",
        "<a>",
        "<a></a><b></b>",
        "<a></a>trailing",
        "<a x=1></a>",
        "<a x></a>",
        "<a x='1></a>",
        "<a><!-- never closed </a>",
        "<a><![CDATA[ never closed </a>",
        "<></>",
    };
    for (const char* document : refused) {
        INFO(document);
        const auto parsed = s3::parse_xml(document);
        REQUIRE(!parsed);
        CHECK(parsed.error().message.starts_with("the object store's XML answer cannot be read ("));
    }
    const auto too_deep = s3::parse_xml(nested);
    REQUIRE(!too_deep);
    CHECK(too_deep.error().message.find("nested deeper than 32") != std::string::npos);
    CHECK(!s3::parse_xml(deep));
}

TEST_CASE("s3: what XML allows beside elements is read as XML reads it", "[s3]") {
    const auto parsed = s3::parse_xml(
        "\xEF\xBB\xBF<?xml version='1.0'?><!-- c --><r a=\"1\" b = 'x>y'><k/>t<![CDATA[<&>]]><?pi x?>"
        "<!-- c -->u&lt;&#65;&#x42;</r ><!-- after -->\n");
    REQUIRE(parsed);
    CHECK(parsed->name == "r");
    CHECK(parsed->text == "t<&>u<AB");
    REQUIRE(parsed->children.size() == 1);
    CHECK(parsed->children[0].name == "k");
    CHECK(parsed->child_text("missing").empty());
}

TEST_CASE("s3: runs of '&' and '<' cost no more than their length", "[s3]") {
    // An unterminated entity is looked for in the next few bytes, not to the document's end.
    const std::string ampersands = "<a>" + std::string(1 << 20, '&');
    CHECK(!s3::parse_xml(ampersands));
    std::string wide = "<a>";
    for (int i = 0; i < 100000; ++i) wide += "<b>x&amp;</b>";
    wide += "</a>";
    const auto parsed = s3::parse_xml(wide);
    REQUIRE(parsed);
    CHECK(parsed->children.size() == 100000);
}
