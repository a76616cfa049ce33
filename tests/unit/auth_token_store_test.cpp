#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "wheelhouse/auth/token_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {
std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

struct fixture {
    temp_dir dir;
    std::unique_ptr<catalog::catalog> db = open_catalog(dir);
    auth::token_store tokens{*db};
};
}  // namespace

TEST_CASE("token_store: a created token authenticates to its grant and only its hash is stored", "[auth]") {
    fixture f;
    auto created = f.tokens.create("ci-flash-attn", auth::scope::upload, {"Flash_Attn", "nunchaku-*"}, std::nullopt, "cli");
    REQUIRE(created);
    CHECK_THAT(created->secret, Catch::StartsWith("wh_"));
    const auto grant = f.tokens.authenticate(created->secret);
    REQUIRE(grant);
    CHECK(grant->name == "ci-flash-attn");
    CHECK(grant->granted == auth::scope::upload);
    CHECK(grant->project_patterns == std::vector<std::string>{"flash-attn", "nunchaku-*"});
    CHECK(auth::permits(*grant, auth::scope::upload, "flash-attn"));
    CHECK_FALSE(auth::permits(*grant, auth::scope::upload, "xformers"));

    const auto database = read_file(f.dir / "catalog.db");
    CHECK(database.find(created->secret) == std::string::npos);
}

TEST_CASE("token_store: unknown, revoked and expired tokens are refused alike", "[auth]") {
    fixture f;
    auto created = f.tokens.create("admin-1", auth::scope::admin, {}, std::nullopt, "cli");
    REQUIRE(created);
    const auto unknown = f.tokens.authenticate("wh_" + std::string(43, 'A'));
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().kind == error_kind::unauthorized);
    CHECK_THAT(f.tokens.authenticate("pypi-AgEIcHlwaS5vcmc").error().message, Catch::Contains("not a wheelhouse token"));

    REQUIRE(f.tokens.revoke("admin-1", "cli"));
    CHECK_FALSE(f.tokens.authenticate(created->secret));
    CHECK(f.tokens.revoke("nobody", "cli").error().kind == error_kind::not_found);

    auto expiring = f.tokens.create("short", auth::scope::upload, {}, std::chrono::seconds(0), "cli");
    REQUIRE(expiring);
    CHECK_FALSE(f.tokens.authenticate(expiring->secret));

    // Only the server's log learns which it was, and the token's name, never its secret.
    const std::pair<std::string, const char*> refusals[] = {
        {"wh_" + std::string(43, 'A'), "unknown wheelhouse token"},
        {created->secret, "token 'admin-1' is revoked"},
        {expiring->secret, "token 'short' has expired"},
        {"pypi-AgEIcHlwaS5vcmc", "a PyPI token (pypi-...), not a wheelhouse one"},
        {"hunter2", "not shaped like a wheelhouse token (wh_...)"},
    };
    for (const auto& [secret, refusal] : refusals) {
        CAPTURE(secret);
        const auto checked = f.tokens.check(secret);
        REQUIRE_FALSE(checked.grant);
        CHECK(checked.grant.error().message == f.tokens.authenticate(secret).error().message);
        CHECK(checked.refusal == refusal);
    }
    CHECK(f.tokens.check(created->secret).grant.error().message == unknown.error().message);
}

TEST_CASE("token_store: names are unique and checked, list shows every token", "[auth]") {
    fixture f;
    REQUIRE(f.tokens.create("a", auth::scope::read, {}, std::nullopt, "cli"));
    CHECK(f.tokens.create("a", auth::scope::read, {}, std::nullopt, "cli").error().kind == error_kind::conflict);
    CHECK(f.tokens.create("bad name", auth::scope::read, {}, std::nullopt, "cli").error().kind == error_kind::invalid);
    CHECK(f.tokens.create("b", auth::scope::read, {"bad/pattern"}, std::nullopt, "cli").error().kind == error_kind::invalid);
    REQUIRE(f.tokens.create("b", auth::scope::upload, {}, std::chrono::hours(24), "cli"));
    const auto listed = f.tokens.list();
    REQUIRE(listed);
    REQUIRE(listed->size() == 2);
    CHECK(listed->at(1).grant.name == "b");
    CHECK(listed->at(1).expires_ms.has_value());
    REQUIRE(f.tokens.mark_used("b"));
    CHECK(f.tokens.list()->at(1).last_used_ms.has_value());
}

TEST_CASE("token_store: a flood of made-up tokens never pushes a real token's grant out of memory", "[auth]") {
    fixture f;
    auto created = f.tokens.create("ci", auth::scope::upload, {}, std::nullopt, "cli");
    REQUIRE(created);
    REQUIRE(f.tokens.authenticate(created->secret));  // read once, then kept
    // Well-formed secrets that no token has: each is read once and kept as a refusal, more of
    // them than the cache holds, so the refusals start again empty at least once.
    std::string made_up = created->secret;
    made_up[4] = made_up[4] == 'x' ? 'y' : 'x';  // never the real secret, whatever its tail
    for (std::size_t i = 0; i <= auth::token_store::max_cached_checks + 10; ++i) {
        const auto digits = std::to_string(i);
        made_up.replace(made_up.size() - digits.size(), digits.size(), digits);
        REQUIRE_FALSE(f.tokens.authenticate(made_up));
    }
    const auto before = f.tokens.cache_stats();
    REQUIRE(f.tokens.authenticate(created->secret));
    CHECK(f.tokens.cache_stats().lookups == before.lookups);  // from memory, no database read
    CHECK(f.tokens.cache_stats().hits - before.hits == 1);
}

TEST_CASE("token_store: checks come from memory until a token changes, here or in another process", "[auth]") {
    fixture f;
    auto created = f.tokens.create("team", auth::scope::read, {}, std::nullopt, "cli");
    REQUIRE(created);
    const auto before = f.tokens.cache_stats();
    for (int i = 0; i < 3; ++i) REQUIRE(f.tokens.authenticate(created->secret));
    CHECK(f.tokens.cache_stats().lookups - before.lookups == 1);
    CHECK(f.tokens.cache_stats().hits - before.hits == 2);

    // `wheelhouse token revoke` in another process: its own catalog, its own store.
    auto other_process = open_catalog(f.dir);
    auth::token_store elsewhere(*other_process);
    REQUIRE(elsewhere.revoke("team", "cli"));
    const auto refused = f.tokens.check(created->secret);
    REQUIRE_FALSE(refused.grant);
    CHECK(refused.refusal == "token 'team' is revoked");

    // A token created elsewhere works at once, and one created here too.
    auto later = elsewhere.create("later", auth::scope::read, {}, std::nullopt, "cli");
    REQUIRE(later);
    CHECK(f.tokens.authenticate(later->secret));
    auto here = f.tokens.create("here", auth::scope::upload, {}, std::nullopt, "cli");
    REQUIRE(here);
    REQUIRE(f.tokens.authenticate(here->secret));
    REQUIRE(f.tokens.revoke("here", "cli"));
    CHECK_FALSE(f.tokens.authenticate(here->secret));
}
