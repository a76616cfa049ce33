#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "jwt_signer.hpp"
#include "test_support.hpp"
#include "wheelhouse/auth/build_labels.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/oidc/exchange.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
namespace json = boost::json;

namespace {

constexpr std::string_view issuer = "https://token.actions.githubusercontent.com";
constexpr std::int64_t now = 1'900'000'000;

const signing_key& issuer_key() {
    static const auto key = signing_key::rsa("gh-1");
    return key;
}

json::object claims(std::string jti = "run-1") {
    return {{"iss", issuer}, {"aud", "wheelhouse"}, {"iat", now - 5}, {"exp", now + 295}, {"jti", std::move(jti)},
            {"repository", "Dao-AILab/flash-attention"}, {"repository_owner", "Dao-AILab"},
            {"repository_owner_id", "123456"},
            {"job_workflow_ref", "Dao-AILab/flash-attention/.github/workflows/release.yml@refs/tags/v2.8.3"},
            {"ref", "refs/tags/v2.8.3"}, {"sha", "0123abcd"}, {"event_name", "push"}, {"run_id", "77"}};
}

std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

struct fixture {
    temp_dir dir;
    std::unique_ptr<catalog::catalog> db = open_catalog(dir);
    auth::token_store tokens{*db};
    oidc::publisher_store publishers{*db, tokens};
    int fetches = 0;
    oidc::key_cache keys{[this](const std::string& url, std::size_t) -> result<std::string> {
                             ++fetches;
                             if (url.ends_with("openid-configuration"))
                                 return json::serialize(json::object{{"issuer", issuer}, {"jwks_uri", std::string(issuer) + "/jwks"}});
                             return key_set_json({&issuer_key()});
                         },
                         {}};
    oidc::token_exchange exchange{tokens, publishers, keys, [] {
                                      oidc::exchange_settings settings;
                                      settings.now_seconds = [] { return now; };
                                      return settings;
                                  }()};

    oidc::publisher add(std::string project, std::string labels = "", std::string environment = "") {
        oidc::publisher draft;
        draft.project = std::move(project);
        draft.repository = "Dao-AILab/flash-attention";
        draft.owner_id = "123456";
        draft.workflow = "release.yml";
        draft.label_pattern = std::move(labels);
        draft.environment = std::move(environment);
        auto added = publishers.add(draft, "cli");
        REQUIRE(added);
        return *added;
    }
};

}  // namespace

TEST_CASE("exchange: a matching token is traded for an upload token limited to its projects", "[oidc]") {
    fixture f;
    const auto publisher = f.add("flash-attn");
    f.add("other-project", "", "");
    auto minted = f.exchange.exchange(signed_token(issuer_key(), claims()));
    REQUIRE(minted);
    CHECK(std::abs(minted->expires_seconds - (catalog::now_ms() / 1000 + 900)) <= 2);  // the store stamps real time
    CHECK(minted->projects == std::vector<std::string>{"flash-attn", "other-project"});
    CHECK_THAT(minted->name, Catch::StartsWith("oidc-" + std::to_string(publisher.id) + "-"));

    auto grant = f.tokens.authenticate(minted->secret);
    REQUIRE(grant);
    CHECK(grant->granted == auth::scope::upload);
    CHECK(grant->build_limits.empty());
    CHECK(auth::permits(*grant, auth::scope::upload, "flash-attn"));
    CHECK_FALSE(auth::permits(*grant, auth::scope::upload, "xformers"));
    CHECK_FALSE(auth::permits(*grant, auth::scope::admin, "flash-attn"));

    // Audited in the transaction that made it: who, which run, which projects.
    catalog::audit_page page;
    catalog::audit_query mints;
    mints.action = "mint_token";
    REQUIRE(f.db->read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto read = catalog::read_audit(db, mints);
        if (!read) return read.error();
        page = std::move(*read);
        return {};
    }));
    REQUIRE(page.entries.size() == 1);
    CHECK(page.entries[0].actor == "oidc Dao-AILab/flash-attention");
    CHECK(page.entries[0].target == minted->name);
    CHECK_THAT(*page.entries[0].detail, Catch::Contains("\"run_id\":\"77\"") && Catch::Contains("flash-attn"));
    CHECK(f.exchange.count(oidc::exchange_outcome::minted) == 1);
}

TEST_CASE("exchange: each token is accepted once", "[oidc]") {
    fixture f;
    f.add("flash-attn");
    const auto token = signed_token(issuer_key(), claims("once"));
    REQUIRE(f.exchange.exchange(token));
    auto replayed = f.exchange.exchange(token);
    REQUIRE_FALSE(replayed);
    CHECK(replayed.error().kind == error_kind::conflict);
    CHECK_THAT(replayed.error().message, Catch::Contains("exchanged before"));
    CHECK(f.tokens.list()->size() == 1);
    CHECK(f.exchange.count(oidc::exchange_outcome::replayed) == 1);
}

TEST_CASE("exchange: an issuer no publisher names is refused without fetching anything", "[oidc]") {
    fixture f;
    f.add("flash-attn");
    auto elsewhere = claims();
    elsewhere["iss"] = "https://169.254.169.254/latest";
    auto refused = f.exchange.exchange(signed_token(issuer_key(), elsewhere));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == error_kind::forbidden);
    CHECK_THAT(refused.error().message, Catch::Contains("no trusted publisher of this index uses the issuer"));
    CHECK(f.fetches == 0);
}

TEST_CASE("exchange: a valid token no publisher matches says the nearest miss, and mints nothing", "[oidc]") {
    fixture f;
    f.add("flash-attn");
    auto renamed = claims();
    renamed["repository_owner_id"] = "999999";
    auto refused = f.exchange.exchange(signed_token(issuer_key(), renamed));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == error_kind::forbidden);
    CHECK_THAT(refused.error().message, Catch::Contains("valid token, but no trusted publisher matches") &&
                                            Catch::Contains("another account holds its name"));
    auto fork = claims("run-2");
    fork["repository"] = "attacker/flash-attention";
    CHECK_THAT(f.exchange.exchange(signed_token(issuer_key(), fork)).error().message,
               Catch::Contains("names the repository 'attacker/flash-attention'"));
    CHECK(f.tokens.list()->empty());
}

TEST_CASE("exchange: a publisher's label pattern limits the minted token, per project", "[oidc]") {
    fixture f;
    f.add("flash-attn", "cu130*");
    f.add("flash-attn", "*torch2.10*");
    f.add("kernels");
    auto minted = f.exchange.exchange(signed_token(issuer_key(), claims()));
    REQUIRE(minted);
    auto grant = f.tokens.authenticate(minted->secret);
    REQUIRE(grant);
    CHECK(grant->build_limits.size() == 3);
    CHECK(auth::permits_file(*grant, "flash_attn-2.8.3+cu130torch2.9-cp312-cp312-linux_x86_64.whl"));
    CHECK(auth::permits_file(*grant, "flash_attn-2.8.3+cu128torch2.10-cp312-cp312-linux_x86_64.whl"));
    CHECK_FALSE(auth::permits_file(*grant, "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl"));
    CHECK(auth::permits_file(*grant, "kernels-1.0+cu128-py3-none-any.whl"));  // kernels' publisher has no pattern
}

TEST_CASE("exchange: an environment publisher needs the environment", "[oidc]") {
    fixture f;
    f.add("flash-attn", "", "pypi");
    auto refused = f.exchange.exchange(signed_token(issuer_key(), claims()));
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("environment 'pypi'"));
    auto in_environment = claims("run-3");
    in_environment["environment"] = "pypi";
    REQUIRE(f.exchange.exchange(signed_token(issuer_key(), in_environment)));
}

TEST_CASE("exchange: removing a publisher revokes the tokens it minted at once", "[oidc]") {
    fixture f;
    const auto publisher = f.add("flash-attn");
    auto minted = f.exchange.exchange(signed_token(issuer_key(), claims()));
    REQUIRE(minted);
    REQUIRE(f.tokens.authenticate(minted->secret));  // now in the store's memory
    auto other_project = f.publishers.remove(publisher.id, "kernels", "alice");
    REQUIRE_FALSE(other_project);
    CHECK(other_project.error().kind == error_kind::not_found);
    auto removed = f.publishers.remove(publisher.id, "Flash_Attn", "alice");
    REQUIRE(removed);
    CHECK(removed->tokens_revoked == 1);
    CHECK_FALSE(f.tokens.authenticate(minted->secret));
    CHECK(f.publishers.list()->empty());
    CHECK(f.publishers.stats().removed == 1);
}

TEST_CASE("exchange: the same publisher twice is a conflict", "[oidc]") {
    fixture f;
    f.add("flash-attn");
    oidc::publisher again;
    again.project = "Flash-Attn";
    again.repository = "dao-ailab/flash-attention";
    again.owner_id = "123456";
    again.workflow = ".github/workflows/release.yml";
    auto added = f.publishers.add(again, "cli");
    REQUIRE_FALSE(added);
    CHECK(added.error().kind == error_kind::conflict);
    CHECK(f.publishers.count().value() == 1);
}
