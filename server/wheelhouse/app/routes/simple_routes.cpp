#include "wheelhouse/app/routes/simple_routes.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/page_response.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/pep691/negotiation.hpp"
#include "wheelhouse/render/html.hpp"
#include "wheelhouse/render/simple_index.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

using transport::make_text_response;

using rendered = result<std::optional<std::string>>;

rendered render_project_list(const route_context& context, pep691::page_format format,
                             const catalog::project_filter& visible) {
    const auto projects = context.catalog.list_projects(visible);
    if (!projects) return projects.error();
    const auto listing = render::project_listings(*projects);
    return std::optional(format == pep691::page_format::json ? render::project_list_json(listing)
                                                             : render::project_list_html(listing));
}

rendered render_project(const route_context& context, const std::string& name, const simple_index& index,
                        pep691::page_format format) {
    auto found = context.catalog.files_of_project(name);
    if (!found) return found.error();
    if (!*found) return std::optional<std::string>();
    auto& [project, files, release_files] = **found;
    auto listed = render::index_files(files, index.selector);
    const auto note = render::left_out_note(files, listed, project.name);
    render::link_options links;
    links.files_base = context.settings.files_base;
    links.integrity_base = context.settings.public_root + "integrity/";
    return std::optional(format == pep691::page_format::json
                             ? render::project_page_json(project, listed, links, release_files, note)
                             : render::project_page_html(project, listed, links, release_files, note));
}

// A client sends the same Accept header on every request (pip's, byte for byte), so each I/O
// thread remembers the last few answers instead of parsing the header every time.
std::optional<pep691::media_choice> negotiate_remembered(std::string_view accept, bool html_only) {
    struct remembered {
        std::string accept;
        bool html_only = false;
        std::optional<pep691::media_choice> choice;
    };
    constexpr std::size_t kept = 4;
    constexpr std::size_t longest_kept = 256;  // longer headers are rare; not worth a slot
    thread_local std::array<remembered, kept> memory;
    thread_local std::size_t next_slot = 0;
    for (const auto& entry : memory) {
        if (entry.html_only == html_only && entry.accept.size() == accept.size() && entry.choice.has_value() &&
            entry.accept == accept)
            return entry.choice;
    }
    auto choice = pep691::negotiate(accept, html_only);
    if (choice && accept.size() <= longest_kept) {  // a 406 is not worth remembering
        auto& slot = memory[next_slot];
        next_slot = (next_slot + 1) % kept;
        slot.accept.assign(accept);
        slot.html_only = html_only;
        slot.choice = choice;
    }
    return choice;
}

// "max-age=60, public", written into `buffer` so a page hit allocates nothing for it.
// "private" keeps a private index's pages out of shared caches (RFC 9111 §3.5).
std::string_view page_cache_control(std::chrono::seconds max_age, bool private_index, char (&buffer)[48]) {
    constexpr std::string_view before = "max-age=";
    const std::string_view after = private_index ? ", private" : ", public";
    char* out = std::copy(before.begin(), before.end(), buffer);
    out = std::to_chars(out, buffer + sizeof buffer - after.size(), max_age.count()).ptr;
    out = std::copy(after.begin(), after.end(), out);
    return {buffer, static_cast<std::size_t>(out - buffer)};
}

// The page cache scope of a filtered project list: one per set of patterns, apart from every
// selector's scope (no selector holds ':').
std::string list_scope(const catalog::project_filter& visible) {
    if (visible.shows_every_project()) return {};
    std::string scope = "projects:";
    for (const auto& pattern : visible.patterns) scope += pattern + ",";
    return scope;
}

// How a page is answered once it is at hand: on the I/O thread for a hit, on the read pool
// (or the outbound lane) for a miss.
struct page_answer {
    std::string_view content_type;
    std::string_view cache_control;
    bool negotiated = true;
};

transport::outgoing_response answer_page(const http::request_header<>& request, const page_cache::page_result& page,
                                         const page_answer& how, std::string_view project) {
    if (!page) return error_response(request, page.error());
    if (!*page) {
        return make_text_response(request, http::status::not_found,
                                  "no project named '" + std::string(project) + "' in this index");
    }
    return respond_with_page(request, **page, how.content_type, how.cache_control, how.negotiated);
}

// The same, held by a waiter that answers later.
struct kept_answer {
    std::string_view content_type;  // one of pep691's constants
    std::string cache_control;
    bool negotiated = true;
    page_answer view() const { return {content_type, cache_control, negotiated}; }
};

// A page of a name no project of this index has: the upstream's, as this index renders it;
// its 404 when the upstream has no such project.
transport::outgoing_response answer_upstream_page(const http::request_header<>& request,
                                                  const upstream::page_outcome& outcome, pep691::page_format format,
                                                  const page_answer& how, std::string_view project) {
    const auto& kept = *outcome.kept;
    if (!kept.page) {
        return make_text_response(request, http::status::not_found,
                                  "no project named '" + std::string(project) + "' in this index or at the upstream index " +
                                      kept.upstream);
    }
    const auto& body = format == pep691::page_format::json ? kept.json : kept.html;
    return respond_with_page(request, rendered_page{body.body, body.etag, body.file}, how.content_type, how.cache_control,
                             how.negotiated, {}, outcome.stale() ? stale_warning : std::string_view());
}

// Where a page of the project `key.project` comes from when the catalog has no such project.
struct upstream_plan {
    const upstream::upstream_index* upstream = nullptr;  // null: none is configured for it
    page_cache::renderer local;                           // renders it should the name be owned by now
};

// A miss of a name the catalog lacks goes to its upstream on the outbound lane (single flight);
// the flight asks the catalog again first, so a name that became owned meanwhile is answered
// from here, and a reserved one with this index's 404. Called on the read pool.
void serve_from_upstream(route_context& context, const route& row, const http::request_header<>& request,
                         const transport::responder& respond, const page_key& key, const kept_answer& how,
                         upstream_plan plan) {
    auto waiter = [&context, request, respond, key, how, local = std::move(plan.local)](
                      const upstream::page_outcome& outcome) {
        if (outcome.what == upstream::page_outcome::kind::page)
            return respond(answer_upstream_page(request, outcome, key.format, how.view(), key.project));
        if (outcome.what == upstream::page_outcome::kind::failed)
            return respond(error_response(request, *outcome.failure));
        const auto page = context.pages.get_or_render(key, local);  // owned: its page, if it has one now
        if (!page || *page) return respond(answer_page(request, page, how.view(), key.project));
        respond(make_text_response(request, http::status::not_found,
                                   "project '" + key.project + "' is reserved on this index and has no files yet; "
                                   "no upstream index is asked for it"));
    };
    if (!context.upstream_pages->request(*plan.upstream, key.project, std::move(waiter), context.outbound_workers))
        respond(busy_response(request, lane::outbound, row.answers));  // the fetch's lane: see route_request::busy
}

// A hit answers inline; a miss is rendered on the read pool, once however many requests wait
// for it, and answered from there (503 when the pool's queue is full). `make_renderer` is called
// on a miss only, so a hit copies nothing for a render it does not need. A name the catalog
// lacks is served from `upstream` when one is given: from memory inline, else once the read
// pool's render has found no project of that name.
template <class MakeRenderer>
route_answer serve_page(route_context& context, route_request& request, const page_key& key,
                        const MakeRenderer& make_renderer, const page_answer& how,
                        const upstream::upstream_index* upstream = nullptr) {
    if (auto hit = context.pages.find(key)) return respond_with_page(request.header(), *hit, how.content_type,
                                                                     how.cache_control, how.negotiated);
    if (upstream) {
        if (auto kept = context.upstream_pages->find(*upstream, key.project))
            return answer_upstream_page(request.header(), *kept, key.format, how, key.project);
    }
    page_cache::renderer render = make_renderer();
    upstream_plan plan{upstream, upstream ? render : page_cache::renderer()};
    auto waiter = [&context, &row = *request.matched, header = request.header(), respond = request.respond, key,
                   how = kept_answer{how.content_type, std::string(how.cache_control), how.negotiated},
                   plan = std::move(plan)](const page_cache::page_result& page) mutable {
        if (page && !*page && plan.upstream)
            return serve_from_upstream(context, row, header, respond, key, how, std::move(plan));
        respond(answer_page(header, page, how.view(), key.project));
    };
    if (!context.pages.render_once(key, std::move(render), std::move(waiter), context.read_workers))
        return request.busy(lane::read_pool);  // the render's lane, not the row's: see route_request::busy
    return std::nullopt;
}

// The pages of one index: `rest` is what its row's {project...} took (nothing on the list's
// rows, where a trailing slash tells the list from its redirect).
route_answer serve_simple(route_context& context, route_request& routed, const simple_index& index) {
    const auto& request = routed.header();
    const auto& target = routed.target;
    const auto rest = routed.capture_rest("project");
    const std::string_view prefix = index.prefix;
    if (rest.empty() && !target.trailing_slash()) return redirect_permanently(request, context.settings.public_root, prefix);
    std::optional<pep691::media_choice> choice;
    if (const auto format = target.query_value("format")) {
        choice = pep691::choose_by_format_parameter(*format);
        if (!choice) {
            return make_text_response(request, http::status::bad_request,
                                      "unknown format '" + std::string(*format) +
                                          "'; use format=json or format=html");
        }
    } else {
        const auto accept = field_value(request, http::field::accept);
        choice = negotiate_remembered(accept, false);
        if (choice && choice->format == pep691::page_format::json &&
            pep691::prefers_html_for_core_metadata(field_value(request, http::field::user_agent))) {
            if (auto html = negotiate_remembered(accept, true)) choice = html;
        }
        if (!choice) {
            return make_text_response(request, http::status::not_acceptable,
                                      "this index serves application/vnd.pypi.simple.v1+json, "
                                      "application/vnd.pypi.simple.v1+html and text/html; the Accept header "
                                      "allows none of them");
        }
    }
    char cache_control_text[48];
    const auto cache_control =
        page_cache_control(context.settings.page_max_age, context.settings.private_index, cache_control_text);
    // Pages chosen by ?format= depend on neither Accept nor User-Agent.
    const bool negotiated = !target.query_value("format").has_value();

    if (rest.empty()) {
        // Every index lists every project (a variant page may hold only its pure files), so
        // they share one list, kept in the /simple/ scope, or in its filter's scope for a
        // project-limited token; its links are relative.
        const auto format = choice->format;
        return serve_page(context, routed, {list_scope(routed.visible), "", format},
                          [&] {
                              return [&context, format, visible = routed.visible] {
                                  return render_project_list(context, format, visible);
                              };
                          },
                          {choice->content_type, cache_control, negotiated});
    }

    const auto& requested = rest[0];
    const bool well_formed = rest.size() == 1 || (rest.size() == 2 && rest[1].empty());
    if (!well_formed || !pep503::is_valid_project_name(requested)) {
        return make_text_response(request, http::status::not_found,
                                  "no such page; project pages are at " + std::string(prefix) + "<project>/");
    }
    const auto normalized = pep503::normalize(requested);
    if (rest.size() == 1 || normalized != requested)
        return redirect_permanently(request, context.settings.public_root, std::string(prefix) + normalized + "/");

    const std::string scope = index.selector ? index.selector->canonical() : std::string();
    const auto format = choice->format;
    const auto* upstream = context.upstream_pages ? context.settings.upstreams.upstream_for(scope, normalized) : nullptr;
    return serve_page(context, routed, {scope, normalized, format},
                      [&] {
                          return [&context, normalized, index, format] {
                              return render_project(context, normalized, index, format);
                          };
                      },
                      {choice->content_type, cache_control, negotiated}, upstream);
}

// A variant index's selector, parsed: 404 for an unknown word, 400 for one that is malformed
// or contradicts itself, each with the reason.
result<variants::selector> selector_of(const route_request& routed) {
    return variants::parse_selector(routed.capture("selector"));
}

}  // namespace

route_answer simple_page(route_context& context, route_request& request) {
    return serve_simple(context, request, simple_index{"/simple/", std::nullopt});
}

route_answer variant_root(route_context& context, route_request& routed) {
    auto selector = selector_of(routed);
    if (!selector) return routed.refuse(selector.error());
    return redirect_permanently(routed.header(), context.settings.public_root,
                                "/variants/" + selector->canonical() + "/simple/");
}

route_answer variant_page(route_context& context, route_request& routed) {
    auto selector = selector_of(routed);
    if (!selector) return routed.refuse(selector.error());
    const std::string canonical = selector->canonical();
    if (routed.capture("selector") != canonical) {
        // One spelling per index keeps one cache scope per index. The rest of the path goes
        // along as the router read it; a project name that needs it is normalised by the next hop.
        std::string path = "/variants/" + canonical + "/simple";
        for (const auto& segment : routed.capture_rest("project")) {
            path += '/';
            render::append_percent_encoded_segment(path, segment);
        }
        if (routed.capture_rest("project").empty() && routed.target.trailing_slash()) path += '/';
        return redirect_permanently(routed.header(), context.settings.public_root, path);
    }
    return serve_simple(context, routed, simple_index{"/variants/" + canonical + "/simple/", std::move(selector).value()});
}

}  // namespace wheelhouse::app
