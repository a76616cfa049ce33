#include <catch2/catch.hpp>

#include <cctype>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "tar_builder.hpp"
#include "test_server.hpp"
#include "wheelhouse/app/route_access.hpp"
#include "wheelhouse/app/route_table.hpp"
#include "wheelhouse/app/router.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/transport/responses.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

constexpr std::string_view sample_project = "kernels";
const std::string sample_file = "kernels-1.0-py3-none-any.whl";
constexpr std::string_view boundary = "route-table-test-boundary";

app::router table_router() {
    auto built = app::router::build(app::route_table());
    REQUIRE(built);
    return std::move(built).value();
}

std::string make_token(test_server& server, std::string_view name, auth::scope scope,
                       std::vector<std::string> projects = {}) {
    auth::token_store tokens(server.catalog());
    auto created = tokens.create(name, scope, projects, std::nullopt, "test");
    REQUIRE(created);
    return created->secret;
}

// A concrete target for a pattern: each capture takes a value the sample catalog has.
std::string target_of(std::string_view pattern, const std::map<std::string, std::string>& samples) {
    if (pattern.ends_with("[/]")) pattern.remove_suffix(3);
    std::string out;
    while (!pattern.empty()) {
        const auto open = pattern.find('{');
        out += pattern.substr(0, open);
        if (open == std::string_view::npos) break;
        const auto close = pattern.find('}', open);
        std::string name(pattern.substr(open + 1, close - open - 1));
        if (name.ends_with("...")) name.resize(name.size() - 3);
        const auto sample = samples.find(name);
        INFO("the route table walk has no sample for {" << name << "}: add one to the test's samples");
        REQUIRE(sample != samples.end());
        out += sample->second;
        pattern.remove_prefix(close + 1);
    }
    return out;
}

const std::pair<app::method_bit, http::verb> every_method[] = {
    {app::GET, http::verb::get},   {app::HEAD, http::verb::head},        {app::POST, http::verb::post},
    {app::PUT, http::verb::put},   {app::DELETE, http::verb::delete_},
};

// Who asks: no token, one the index does not know, each scope, and an admin of other projects.
struct caller {
    std::string label;
    std::string authorization;  // empty: none sent
    std::optional<auth::scope> scope;
    bool limited_elsewhere = false;
};

enum class verdict { allowed, unauthorized, forbidden, refused_by_body };

// What the route's declaration promises this caller.
verdict expected(const app::route& route, const caller& who, bool private_index) {
    if (route.needs == app::access::anyone) return verdict::allowed;
    if (route.needs == app::access::read && !private_index) return verdict::allowed;
    if (!who.scope) return verdict::unauthorized;
    const auto needed = route.needs == app::access::admin    ? auth::scope::admin
                        : route.needs == app::access::upload ? auth::scope::upload
                                                            : auth::scope::read;
    if (*who.scope < needed) return verdict::forbidden;
    if (!who.limited_elsewhere) return verdict::allowed;
    switch (route.scope) {
        case app::project_scope::none:
        case app::project_scope::listing: return verdict::allowed;
        case app::project_scope::body: return verdict::refused_by_body;
        case app::project_scope::project:
        case app::project_scope::file:
        case app::project_scope::index: return verdict::forbidden;
    }
    return verdict::forbidden;
}

// The body a route's plan reads: the sample wheel for uploads (raw or as twine's form), an
// empty object for the JSON writes.
std::pair<std::string, std::string> body_for(const app::route& route, const std::string& wheel) {
    if (route.body == app::body_kind::json) return {"application/json", "{}"};
    if (route.body == app::body_kind::raw_upload) return {"application/octet-stream", wheel};
    if (route.body != app::body_kind::form_upload) return {};
    const std::string b(boundary);
    std::string form = "--" + b + "\r\nContent-Disposition: form-data; name=\":action\"\r\n\r\nfile_upload\r\n";
    form += "--" + b + "\r\nContent-Disposition: form-data; name=\"content\"; filename=\"" + sample_file +
            "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + wheel + "\r\n--" + b + "--\r\n";
    return {"multipart/form-data; boundary=" + b, form};
}

void walk_the_table(bool private_index) {
    server_settings settings;
    settings.app.private_index = private_index;
    test_server server(settings);
    const auto wheel = make_wheel("kernels", "1.0");
    const auto file = server.ingest(wheel, sample_file);
    const std::vector<caller> callers = {
        {"no token", "", std::nullopt},
        {"an unknown token", "Bearer wh_" + std::string(40, 'Q'), std::nullopt},
        {"read", "Bearer " + make_token(server, "reader", auth::scope::read), auth::scope::read},
        {"upload", "Bearer " + make_token(server, "uploader", auth::scope::upload), auth::scope::upload},
        {"admin", "Bearer " + make_token(server, "root", auth::scope::admin), auth::scope::admin},
        {"admin of other projects", "Bearer " + make_token(server, "elsewhere", auth::scope::admin, {"other-*"}),
         auth::scope::admin, true},
    };
    const std::map<std::string, std::string> samples = {
        {"project", std::string(sample_project)}, {"filename", sample_file}, {"sha256", file.sha256}, {"version", "1.0"},
        {"selector", "cu130"},                    {"name", "nobody"},        {"path", "js/app.mjs"},
        {"id", "1"},
    };

    // Every method the routes of one path declare: a method none declares gets 405 with them.
    std::map<std::string, app::method_set> methods_of_path;
    for (const auto& route : app::route_table()) methods_of_path[target_of(route.pattern, samples)] |= route.methods;

    for (const auto& route : app::route_table()) {
        const auto target = target_of(route.pattern, samples);
        for (const auto& [bit, method] : every_method) {
            if ((route.methods & bit) == 0) continue;
            for (const auto& who : callers) {
                CAPTURE(private_index, route.pattern, http::to_string(method), who.label);
                auto [type, body] = body_for(route, wheel);
                http::fields fields;
                if (!who.authorization.empty()) fields.set(http::field::authorization, who.authorization);
                if (!type.empty()) fields.set(http::field::content_type, type);
                const auto response = server.request(method, target, fields, std::move(body));
                const auto status = response.result_int();
                CAPTURE(status, response.body());
                CHECK(status < 500);
                switch (expected(route, who, private_index)) {
                    case verdict::allowed: CHECK((status != 401 && status != 403)); break;
                    case verdict::unauthorized: {
                        CHECK(status == 401);
                        const std::string challenge(response[http::field::www_authenticate]);
                        CHECK_THAT(challenge, Catch::StartsWith(route.answers == app::audience::json_api ? "Bearer " : "Basic "));
                        break;
                    }
                    case verdict::forbidden: CHECK(status == 403); break;
                    case verdict::refused_by_body: CHECK((status >= 400 && status != 401)); break;
                }
            }
        }
        CAPTURE(route.pattern);
        const auto refused = server.request(http::verb::patch, target);
        CHECK(refused.result_int() == 405);
        CHECK(refused[http::field::allow] == app::allow_header(methods_of_path[target]));
    }
}

// Percent-encodes every byte outside the unreserved set, so any name fits one path segment.
std::string encoded(std::string_view name) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
            out += c;
        } else {
            out += '%';
            out += hex[byte >> 4];
            out += hex[byte & 15];
        }
    }
    return out;
}

// Names of every kind of file, of the token's project ("kernels") and of another ("others"),
// and names of no project at all.
struct named_file {
    std::string name;
    bool own = false;
};
std::vector<named_file> names_of_every_kind() {
    std::vector<named_file> names;
    for (const std::string project : {"kernels", "others"}) {
        const bool own = project == "kernels";
        for (const std::string& name : {project + "-1.0-py3-none-any.whl", project + "-1.0.tar.gz",
                                        project + "-1.0-py3-none-any.whl.metadata", project + "-1.0.tar.gz.metadata",
                                        project + "-1.0-variants.json"}) {
            names.push_back({name, own});
        }
    }
    for (const std::string& nothing :
         {std::string("x"), std::string("kernels"), std::string("kernels-1.0.zip"), std::string("Kernels-1.0.tar.gz"),
          std::string("kernels-1.0-py3-none-any.whl.zip"), std::string(".metadata"), std::string("-variants.json"),
          std::string("kernels-1.0-x-variants.json"), std::string("\xff\xfe.whl"), std::string(300, 'a') + ".whl",
          std::string("kernels-1.0-py3-none-any.whl.metadata.metadata")}) {
        names.push_back({nothing, false});
    }
    return names;
}

// The body that names `name` for a route whose project is in its body: an upload form, or a
// registration's URL. Empty for routes whose body names no file.
std::optional<std::pair<std::string, std::string>> body_naming(const app::route& route, const std::string& name,
                                                               const std::string& wheel) {
    if (route.body == app::body_kind::form_upload) {
        const std::string b(boundary);
        std::string form = "--" + b + "\r\nContent-Disposition: form-data; name=\"content\"; filename=\"" + name +
                           "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + wheel + "\r\n--" + b + "--\r\n";
        return std::pair{"multipart/form-data; boundary=" + b, form};
    }
    if (route.pattern.starts_with("/api/v1/remote")) {
        // A host off the allow-list: refused before any fetch, after the access check.
        return std::pair{std::string("application/json"),
                         R"({"url": "https://127.0.0.1:9/o/r/releases/download/v1/)" + encoded(name) + R"("})"};
    }
    return std::nullopt;
}

void walk_every_kind_of_file(bool private_index) {
    server_settings settings;
    settings.app.private_index = private_index;
    test_server server(settings);
    const auto wheel = make_wheel("kernels", "1.0");
    const auto file = server.ingest(wheel, sample_file);
    server.ingest(build_sdist("kernels-1.0", pkg_info("kernels", "1.0", "2.2")), "kernels-1.0.tar.gz");
    const auto token = "Bearer " + make_token(server, "kernels-admin", auth::scope::admin, {"kernels"});

    std::size_t walked = 0;
    for (const auto& route : app::route_table()) {
        const bool names_a_file = route.scope == app::project_scope::file;
        const bool body_names_a_file = route.scope == app::project_scope::body && !route.pattern.starts_with("/api/v1/import");
        if (!names_a_file && !body_names_a_file) continue;
        if (route.needs == app::access::read && !private_index) continue;  // no token is asked for
        for (const auto& [bit, method] : every_method) {
            if ((route.methods & bit) == 0) continue;
            for (const auto& [name, own] : names_of_every_kind()) {
                // The .metadata row's pattern writes the suffix itself; other names reach the files row.
                std::string_view filename = name;
                if (route.pattern.ends_with("}.metadata")) {
                    if (!filename.ends_with(".metadata") || filename == ".metadata") continue;
                    filename.remove_suffix(std::string_view(".metadata").size());
                }
                std::map<std::string, std::string> samples = {
                    {"filename", encoded(filename)}, {"sha256", file.sha256}, {"version", "1.0"}, {"project", "kernels"}};
                std::string type, body;
                if (body_names_a_file) {
                    auto named = body_naming(route, name, wheel);
                    if (!named) continue;
                    std::tie(type, body) = std::move(*named);
                } else {
                    std::tie(type, body) = body_for(route, wheel);
                }
                CAPTURE(private_index, route.pattern, http::to_string(method), name);
                http::fields fields;
                fields.set(http::field::authorization, token);
                if (!type.empty()) fields.set(http::field::content_type, type);
                const auto response = server.request(method, target_of(route.pattern, samples), fields, std::move(body));
                const auto status = response.result_int();
                CAPTURE(status, response.body());
                CHECK(status < 500);
                if (own) CHECK((status != 401 && status != 403));
                else CHECK(status == 403);
                ++walked;
            }
        }
    }
    CHECK(walked > 100);
}

}  // namespace

TEST_CASE("route table: a token limited to one project reaches that project's files of every kind and no others",
          "[server][routes]") {
    SECTION("a public index") { walk_every_kind_of_file(false); }
    SECTION("a private index") { walk_every_kind_of_file(true); }
}

TEST_CASE("route table: every route, every method, every kind of caller, as declared", "[server][routes]") {
    SECTION("a public index") { walk_the_table(false); }
    SECTION("a private index") { walk_the_table(true); }
}

TEST_CASE("route table: only the page's files, liveness and the OIDC exchange are open on a private index",
          "[server][routes]") {
    std::set<std::string> open;
    for (const auto& route : app::route_table()) {
        if (route.needs == app::access::anyone) open.insert(std::string(route.pattern));
        // A route that needs a token says what it is refused for.
        if (route.needs != app::access::anyone) CHECK_FALSE(route.action.empty());
    }
    // CI has no token before the exchange; the exchange is its own check (oidc/exchange.hpp).
    CHECK(open == std::set<std::string>{"/", "/static/{path...}", "/healthz", "/_/oidc/audience", "/_/oidc/mint-token",
                                        "/_/oidc/github/mint-token", "/.well-known/pytp"});
}

TEST_CASE("route table: paths match segment by segment, with captures and the trailing slash as declared",
          "[server][routes]") {
    const auto routes = table_router();
    struct row {
        std::string target;
        http::verb method;
        std::string pattern;  // "" for no route; "405 <allow>" for a path whose methods differ
        std::string capture_name;
        std::string capture;
    };
    const row table[] = {
        {"/simple/", http::verb::get, "/simple[/]", "", ""},
        {"/simple", http::verb::get, "/simple[/]", "", ""},
        {"/simple/Flash_Attn/", http::verb::head, "/simple/{project...}", "project", "Flash_Attn"},
        {"/simple/flash-attn", http::verb::get, "/simple/{project...}", "project", "flash-attn"},
        {"/simple/a/b/", http::verb::get, "/simple/{project...}", "project", "a"},
        {"/simple/", http::verb::post, "405 GET, HEAD", "", ""},
        {"/", http::verb::get, "/", "", ""},
        {"/static/js/app.mjs", http::verb::get, "/static/{path...}", "path", "js"},
        {"/static", http::verb::get, "", "", ""},
        {"/healthz/", http::verb::get, "", "", ""},
        {"/legacy/", http::verb::post, "/legacy[/]", "", ""},
        {"/legacy", http::verb::get, "405 POST", "", ""},
        {"/api/v1/files/x.whl", http::verb::put, "/api/v1/files/{filename}", "filename", "x.whl"},
        {"/api/v1/files/x.whl", http::verb::get, "/api/v1/files/{filename}[/]", "filename", "x.whl"},
        {"/api/v1/files/x.whl", http::verb::post, "405 GET, HEAD, PUT, DELETE", "", ""},
        {"/api/v1/files/", http::verb::put, "/api/v1/files[/]", "", ""},
        {"/api/v1/files/", http::verb::get, "405 PUT", "", ""},
        {"/api/v1/projects/p/status/", http::verb::post, "/api/v1/projects/{project}/status[/]", "project", "p"},
        {"/api/v1/projects/p/status", http::verb::get, "405 POST, PUT", "", ""},
        {"/api/v1/tokens", http::verb::post, "/api/v1/tokens[/]", "", ""},
        {"/api/v1/tokens/ci", http::verb::delete_, "/api/v1/tokens/{name}[/]", "name", "ci"},
        {"/api/v1/nothing", http::verb::get, "", "", ""},
        {"/api/v1/projects/p/publishers", http::verb::post, "/api/v1/projects/{project}/publishers[/]", "project", "p"},
        {"/api/v1/projects/p/publishers/7", http::verb::delete_, "/api/v1/projects/{project}/publishers/{id}[/]", "id",
         "7"},
        {"/api/v1/projects/p/publishers/7", http::verb::get, "405 DELETE", "", ""},
        {"/_/oidc/audience", http::verb::get, "/_/oidc/audience", "", ""},
        {"/_/oidc/mint-token", http::verb::post, "/_/oidc/mint-token", "", ""},
        {"/_/oidc/mint-token", http::verb::get, "405 POST", "", ""},
        {"/_/oidc/mint-token/", http::verb::post, "", "", ""},
        {"/.well-known/pytp?discover=%2Flegacy%2F", http::verb::get, "/.well-known/pytp", "", ""},
        {"/variants/cu130/simple/nunchaku/", http::verb::get, "/variants/{selector}/simple/{project...}", "selector",
         "cu130"},
        {"/variants/cu130/other/", http::verb::get, "", "", ""},
        {"/files/abc", http::verb::get, "", "", ""},
        {"/files/abc/x.whl", http::verb::get, "/files/{sha256}/{filename}", "filename", "x.whl"},
        {"/files/abc/x.whl.metadata", http::verb::head, "/files/{sha256}/{filename}.metadata", "filename",
         "x.whl.metadata"},
        {"/files/abc/.metadata", http::verb::get, "/files/{sha256}/{filename}", "filename", ".metadata"},
        {"/files/abc/x.metadata.whl", http::verb::get, "/files/{sha256}/{filename}", "filename", "x.metadata.whl"},
        {"/files/abc/x.whl.metadata", http::verb::post, "405 GET, HEAD", "", ""},
    };
    for (const auto& [text, method, pattern, capture_name, capture] : table) {
        CAPTURE(text, http::to_string(method));
        auto target = http_target::parse(text);
        REQUIRE(target);
        const auto found = routes.match(method, *target);
        if (pattern.empty()) {
            CHECK(found.found == nullptr);
            CHECK(found.allowed == 0);
        } else if (pattern.starts_with("405 ")) {
            CHECK(found.found == nullptr);
            CHECK(app::allow_header(found.allowed) == pattern.substr(4));
        } else {
            REQUIRE(found.found != nullptr);
            CHECK(found.found->pattern == pattern);
            if (!capture_name.empty()) {
                app::route_request request;
                request.target = std::move(*target);
                request.captures = found.captures;
                CHECK(request.capture(capture_name) == capture);
            }
        }
    }
}

TEST_CASE("route table: a {name...} capture hands the handler every segment it took", "[server][routes]") {
    const auto routes = table_router();
    const auto [text, expected] = GENERATE(table<std::string, std::vector<std::string>>({
        {"/simple/", {}},
        {"/simple/flash-attn", {"flash-attn"}},
        {"/simple/flash-attn/", {"flash-attn", ""}},
        {"/simple/a/b/", {"a", "b", ""}},
        {"/variants/cu130/simple/a/", {"a", ""}},
    }));
    CAPTURE(text);
    auto target = http_target::parse(text);
    REQUIRE(target);
    auto found = routes.match(http::verb::get, *target);
    REQUIRE(found.found != nullptr);
    app::route_request request;
    request.target = std::move(*target);
    request.captures = std::move(found.captures);
    const auto rest = request.capture_rest("project");
    CHECK(std::vector<std::string>(rest.begin(), rest.end()) == expected);
}

TEST_CASE("route table: a malformed pattern is refused when the table is built", "[server][routes]") {
    const auto handler = [](app::route_context&, app::route_request&) -> app::route_answer { return std::nullopt; };
    for (const std::string_view pattern :
         {"no-slash", "/a/{open", "/a/{rest...}/b", "/a/{}", "/a/{...}", "/a/{x}.m{y}", "/a/{rest...}.metadata"}) {
        CAPTURE(pattern);
        const app::route broken{app::GET,          pattern, app::access::anyone,         app::project_scope::none, "",
                                app::audience::package_tools, app::body_kind::none, app::lane::io_thread,
                                metrics::route::other,        handler};
        CHECK_FALSE(app::router::build(std::span(&broken, 1)));
    }
}

TEST_CASE("route table: matching by first segment keeps the table's order across literal and captured first segments",
          "[server][routes]") {
    // The router looks only at the patterns that share a path's first segment; one whose first
    // segment is a capture shares every first segment, and the table's order still decides.
    const auto handler = [](app::route_context&, app::route_request&) -> app::route_answer { return std::nullopt; };
    const auto row = [&](std::string_view pattern, app::method_set methods) {
        return app::route{methods, pattern, app::access::anyone, app::project_scope::none, "",
                          app::audience::package_tools, app::body_kind::none, app::lane::io_thread,
                          metrics::route::other, handler};
    };
    const std::array table{row("/a/x", app::GET), row("/{any}/y", app::GET), row("/a/{z}", app::GET | app::POST),
                           row("/b/{z}", app::GET), row("/a/y", app::DELETE)};
    const auto built = app::router::build(table);
    REQUIRE(built);
    const auto match = [&](http::verb method, std::string_view path) {
        auto target = http_target::parse(path);
        REQUIRE(target);
        return built->match(method, *target);
    };
    CHECK(match(http::verb::get, "/a/x").found == &table[0]);
    CHECK(match(http::verb::get, "/a/y").found == &table[1]);  // before /a/{z}, though its first segment is a capture
    CHECK(match(http::verb::post, "/a/y").found == &table[2]);
    CHECK(match(http::verb::get, "/a/y").allowed == (app::GET | app::POST | app::DELETE));
    CHECK(match(http::verb::get, "/b/y").found == &table[1]);
    CHECK(match(http::verb::get, "/b/q").found == &table[3]);
    CHECK(match(http::verb::get, "/c/y").found == &table[1]);  // a first segment no literal names
    CHECK(match(http::verb::get, "/c/q").allowed == 0);
    CHECK(match(http::verb::get, "/").allowed == 0);
}

// The project a token must cover, as each route finds it: normalised, from the filename of a
// wheel or its .metadata, or none for what spans projects.
TEST_CASE("route table: each read names the project a token must cover", "[server][routes]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    const std::string authorization = "Bearer " + make_token(server, "reader", auth::scope::read);
    auth::token_store tokens(server.catalog());
    const auto routes = table_router();
    const auto [target, project] = GENERATE(table<std::string, std::string>({
        {"/simple/", ""},
        {"/simple/Flash_Attn/", "flash-attn"},
        {"/simple/flash-attn", "flash-attn"},
        {"/variants/cu130-torch2.10/simple/", ""},
        {"/variants/cu130-torch2.10/simple/Nunchaku/", "nunchaku"},
        {"/files/" + std::string(64, 'a') + "/flash_attn-2.8.3+cu130torch2.10-cp313-cp313-linux_x86_64.whl",
         "flash-attn"},
        {"/files/" + std::string(64, 'a') + "/flash_attn-2.8.3-py3-none-any.whl.metadata", "flash-attn"},
        {"/files/" + std::string(64, 'a') + "/not-a-wheel.txt", ""},
        {"/api/v1/projects/Zope.Interface/variants", "zope-interface"},
        {"/api/v1/files/Flash_Attn-2.8.3-py3-none-any.whl", "flash-attn"},
        {"/api/v1/tokens", ""},
    }));
    CAPTURE(target);
    http::request_header<> header;
    header.method(http::verb::get);
    header.target(target);
    header.set(http::field::authorization, authorization);
    app::route_request request;
    auto parsed = http_target::parse(target);
    REQUIRE(parsed);
    request.target = std::move(*parsed);
    auto found = routes.match(http::verb::get, request.target);
    REQUIRE(found.found != nullptr);
    request.matched = found.found;
    request.captures = found.captures;
    const auto allowed = app::check_access(tokens, header, true, request);
    if (request.matched->needs == app::access::read) CHECK(allowed);
    CHECK(request.project == project);
}

TEST_CASE("route table: every row fills every column, each in keeping with the others", "[server][routes]") {
    std::set<std::pair<std::string_view, app::method_set>> seen;
    for (const auto& route : app::route_table()) {
        const std::string pattern(route.pattern);
        CAPTURE(pattern);
        CHECK(route.methods != 0);
        CHECK((route.methods & ~(app::GET | app::HEAD | app::POST | app::PUT | app::DELETE)) == 0);
        CHECK(((route.methods & app::GET) != 0) == ((route.methods & app::HEAD) != 0));  // HEAD is GET's
        CHECK(pattern.starts_with('/'));
        CHECK(seen.emplace(route.pattern, route.methods).second);
        CHECK(app::router::build(std::span(&route, 1)));
        // Who may call it, and which project that asks for.
        CHECK(route.action.empty() == (route.needs == app::access::anyone));
        if (route.needs == app::access::anyone) CHECK(route.scope == app::project_scope::none);
        if (route.scope == app::project_scope::project) CHECK_THAT(pattern, Catch::Contains("{project"));
        if (route.scope == app::project_scope::file) CHECK_THAT(pattern, Catch::Contains("{filename}"));
        if (route.scope == app::project_scope::body) CHECK(route.body != app::body_kind::none);
        // Who reads its answers: the API's JSON under /api/, PyPI's shapes for the exchange.
        if (route.answers == app::audience::json_api) CHECK(pattern.starts_with("/api/v1/"));
        if (route.answers == app::audience::trusted_publishing)
            CHECK((pattern.starts_with("/_/oidc/") || pattern == "/.well-known/pytp"));
        // The body: only writes read one, and uploads, only uploads, go to the ingest lane.
        const bool reads = (route.methods & ~(app::GET | app::HEAD)) == 0;
        if ((route.methods & ~(app::GET | app::HEAD | app::DELETE)) == 0) CHECK(route.body == app::body_kind::none);
        const bool upload = route.body == app::body_kind::raw_upload || route.body == app::body_kind::form_upload;
        CHECK(upload == (route.runs_on == app::lane::ingest));
        CHECK(upload == (route.label == metrics::route::upload));
        if (route.body == app::body_kind::raw_upload) CHECK((route.methods == app::PUT));
        if (route.body == app::body_kind::form_upload) CHECK((route.methods == app::POST));
        // Changes run where writes do, or wait on other hosts; reads never take a writer.
        if (route.needs == app::access::admin && !reads) CHECK(route.runs_on == app::lane::write_pool);
        if (reads) CHECK(route.runs_on != app::lane::write_pool);
        // Counted under a label of its own kind, and answered by a handler.
        CHECK(route.label != metrics::route::other);
        if (pattern.starts_with("/api/v1/") && !upload) CHECK(route.label == metrics::route::api);
        CHECK(route.handler != nullptr);
    }
}

namespace {

// Holds each pool's one worker until released, so the pool's queue can be filled.
struct lane_hold {
    std::mutex mutex;
    std::condition_variable changed;
    bool open = false;
    int holding = 0;
};
lane_hold* holds = nullptr;

app::route_answer hold_worker(app::route_context&, app::route_request& request) {
    std::unique_lock lock(holds->mutex);
    ++holds->holding;
    holds->changed.notify_all();
    holds->changed.wait(lock, [] { return holds->open; });
    return transport::make_text_response(request.header(), http::status::ok, "released");
}

app::route hold_route(std::string_view pattern, app::lane runs_on) {
    return {app::GET, pattern, app::access::anyone, app::project_scope::none, "", app::audience::package_tools,
            app::body_kind::none, runs_on, metrics::route::other, hold_worker};
}

// What a refusal in `answers`' words looks like.
void check_in_words_of(app::audience answers, const http_response& response) {
    const std::string type(response[http::field::content_type]);
    switch (answers) {
        case app::audience::package_tools: CHECK_THAT(type, Catch::StartsWith("text/plain")); break;
        case app::audience::json_api:
            CHECK(type == "application/json");
            CHECK_THAT(response.body(), Catch::StartsWith("{\"error\":"));
            break;
        case app::audience::trusted_publishing:
            CHECK(type == "application/problem+json");
            CHECK_THAT(response.body(), Catch::Contains("\"errors\":"));
            break;
    }
}

}  // namespace

// A handler that names an audience or a lane of its own answers a full queue in words its row
// does not have: each row's 503 is checked against the row, with every pool full. Rows on the
// I/O thread answer busy only for what they hand off (a page miss, an upstream fetch).
TEST_CASE("route table: with every pool full, each row answers 503 in its row's words, counted under its label",
          "[server][routes]") {
    lane_hold held;
    holds = &held;
    server_settings settings;
    settings.app.read_workers = settings.app.write_workers = settings.app.outbound_workers = 1;
    settings.app.read_queue = settings.app.write_queue = settings.app.outbound_queue = 1;
    const std::pair<std::string_view, app::lane> pools[] = {
        {"/test/hold/read", app::lane::read_pool},
        {"/test/hold/write", app::lane::write_pool},
        {"/test/hold/outbound", app::lane::outbound}};
    for (const auto& [pattern, runs_on] : pools) settings.extra_routes.push_back(hold_route(pattern, runs_on));
    test_server server(settings);
    const auto wheel = make_wheel("kernels", "1.0");
    const auto file = server.ingest(wheel, sample_file);
    const auto admin = "Bearer " + make_token(server, "root", auth::scope::admin);
    const std::map<std::string, std::string> samples = {
        {"project", std::string(sample_project)}, {"filename", sample_file}, {"sha256", file.sha256}, {"version", "1.0"},
        {"selector", "cu130"},                    {"name", "nobody"},        {"path", "js/app.mjs"},
        {"id", "1"},
    };

    // One request holds each pool's worker; once it does, one more fills the pool's queue.
    std::vector<std::thread> holders;
    for (const auto& [pattern, runs_on] : pools) holders.emplace_back([&server, pattern = pattern] { server.get(pattern); });
    {
        std::unique_lock lock(held.mutex);
        REQUIRE(held.changed.wait_for(lock, std::chrono::seconds(10), [&] { return held.holding == 3; }));
    }
    for (const auto& [pattern, runs_on] : pools) holders.emplace_back([&server, pattern = pattern] { server.get(pattern); });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // each is queued

    for (const auto& route : app::route_table()) {
        const auto method = (route.methods & app::GET) != 0 ? http::verb::get
                            : (route.methods & app::POST) != 0 ? http::verb::post
                            : (route.methods & app::PUT) != 0  ? http::verb::put
                                                                 : http::verb::delete_;
        auto [type, body] = body_for(route, wheel);
        http::fields fields;
        fields.set(http::field::authorization, admin);
        if (!type.empty()) fields.set(http::field::content_type, type);
        const auto target = target_of(route.pattern, samples);
        CAPTURE(route.pattern, target);
        const auto before = requests_counted(server, route.label);
        const auto response = server.request(method, target, fields, std::move(body));
        CAPTURE(response.result_int(), response.body());
        CHECK(counted_once_more(server, route.label, before));
        // A row on a pool is answered 503, or refused from its headers before it reaches the pool
        // (an upload's URL without a filename): in its row's words either way.
        const auto status = response.result_int();
        if (route.runs_on != app::lane::io_thread) CHECK((status == 503 || (status >= 400 && status < 500)));
        if (status == 503) CHECK_FALSE(response[http::field::retry_after].empty());
        if (status == 503 || (route.runs_on != app::lane::io_thread && status >= 400)) check_in_words_of(route.answers, response);
    }
    // A page no one has asked for is rendered on the read pool: full, so 503 in the page's words.
    const auto miss = server.get("/simple/" + std::string(sample_project) + "/");
    CHECK(miss.result_int() == 503);
    check_in_words_of(app::audience::package_tools, miss);

    {
        std::lock_guard lock(held.mutex);
        held.open = true;
        held.changed.notify_all();
    }
    for (auto& holder : holders) holder.join();
}

// Refusals from the headers are built before the request is whole: still in its terms.
TEST_CASE("route table: a refusal at the headers answers HEAD without a body and JSON when asked", "[server][routes]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    const auto head = server.request(http::verb::head, "/simple/");
    CHECK(head.result_int() == 401);
    CHECK(head.body().empty());
    const auto json = server.get("/simple/", {{http::field::accept, "application/json"}});
    CHECK(json.result_int() == 401);
    CHECK(json[http::field::content_type] == "application/json");
}
