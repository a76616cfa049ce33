// The reason phrase is what twine and poetry show of a refusal: short, whole words, the fix
// first; the body carries the detail.

#include <catch2/catch.hpp>

#include <string>

#include "test_server.hpp"
#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/error_text.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

std::string upload_token(test_server& server) {
    auth::token_store tokens(server.catalog());
    auto created = tokens.create("ci", auth::scope::upload, {}, std::nullopt, "test");
    REQUIRE(created);
    return created->secret;
}

}  // namespace

TEST_CASE("reason_phrase: the message's first line whole, in printable ASCII", "[answers]") {
    CHECK(app::reason_phrase("send a smaller file") == "send a smaller file");
    CHECK(app::reason_phrase("send a smaller file\nthe upload is 5 bytes") == "send a smaller file");
    CHECK(app::reason_phrase("tab\there \xc3\xa9\r") == "tab here    ");
}

TEST_CASE("reason_phrase: a long message is cut between words and says it was cut", "[answers]") {
    std::string message;
    while (message.size() < 400) message += "wordy sentence, ";
    const auto reason = app::reason_phrase(message);
    CHECK(reason.size() <= reason_budget);
    REQUIRE(reason.ends_with("..."));
    const auto kept = reason.substr(0, reason.size() - 3);
    CHECK(message.starts_with(kept));
    CHECK(message[kept.size()] == ' ');  // the cut fell on a word boundary
    CHECK_FALSE(kept.ends_with(","));   // and the punctuation before it is dropped

    const std::string one_word(400, 'x');  // no space to cut at: cut anyway, within the budget
    CHECK(app::reason_phrase(one_word).size() == reason_budget);
}

TEST_CASE("a refused upload: the status line has the fix whole, the body adds the detail", "[answers]") {
    test_server server;
    const auto token = upload_token(server);
    const std::string filename = "kernels-1.0-py3-none-any.whl";
    const std::string bearer = "Bearer " + token;
    const std::string target = "/api/v1/files/" + filename;
    REQUIRE(server.request(http::verb::put, target, {{http::field::authorization, bearer}}, make_wheel("kernels", "1.0"))
                .result_int() == 201);

    const auto clash = server.request(http::verb::put, target, {{http::field::authorization, bearer}},
                                      make_wheel("kernels", "1.0", "other bytes"));
    CHECK(clash.result_int() == 409);
    const std::string fix =
        "File already exists with other bytes: give the build a new version or build tag, or delete the old file first";
    CHECK(std::string(clash.reason()) == fix);
    CHECK_THAT(clash.body(), Catch::StartsWith("409 Conflict: " + fix + "\n" + filename + " is in the index with sha256 "));

    const auto json = server.request(http::verb::put, target,
                                     {{http::field::authorization, bearer}, {http::field::accept, "application/json"}},
                                     make_wheel("kernels", "1.0", "third bytes"));
    CHECK_THAT(json.body(), Catch::Contains("\"error\":\"" + fix + "\",\"detail\":\"" + filename));
}

TEST_CASE("the private index's 401 names the fix in the status line and an example in the body", "[answers]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    const auto refused = server.get("/simple/");
    CHECK(refused.result_int() == 401);
    CHECK(std::string(refused.reason()) ==
          "reads of this private index need an API token: put one in the index URL: "
          "http://__token__:<token>@<host>/simple/");
    CHECK_THAT(refused.body(), Catch::Contains("\ne.g. pip install --index-url http://__token__:<token>@<host>/simple/"));
}
