#pragma once
// Finds a request's route in the table: the patterns are taken apart once, at start-up, and
// indexed by their first segment; each request is matched, segment by segment, against those
// that share its first segment, with no allocation (a route's few captures are kept in place).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::app {

struct route_match {
    const route* found = nullptr;      // the first route whose path and method fit
    const route* same_path = nullptr;  // the first route whose path fits, whatever its methods
    // Every method of the routes whose path fits: 0 means no route has this path (404),
    // otherwise a request whose method is not among them gets 405 with these as Allow.
    method_set allowed = 0;
    route_captures captures;  // of `found`
};

// Thread safety: const after construction; match() from any thread.
class router {
public:
    // Refuses a malformed pattern with the reason (a programming error, found at start-up).
    static result<router> build(std::span<const route> routes);

    route_match match(http::verb method, const http_target::request_target& target) const;

    // The route whose pattern's leading literal segments share the most with the target's, one
    // that takes `method` first among equals: the route a path no route has was meant for, in
    // whose words (audience) its 404, or a refusal before routing, is answered. nullptr when no
    // pattern shares the first segment.
    const route* nearest(http::verb method, const http_target::request_target& target) const;

    // What a path that no route has gets: 404, and where that part of the server's pages are.
    static std::string_view where_to_look(const http_target::request_target& target) noexcept;

private:
    struct segment {
        enum class kind { literal, capture, rest } what = kind::literal;
        std::string_view text;    // the literal, or the capture's name
        std::string_view suffix;  // of a capture: what its segment must end with (".metadata")
    };
    struct compiled {
        const route* declared = nullptr;
        std::vector<segment> segments;
        bool optional_slash = false;  // "[/]": a final empty segment may follow
    };
    static result<compiled> compile(const route& declared);
    static bool fits(const compiled& pattern, const std::vector<std::string>& segments,
                     route_captures* captures);

    // The patterns that may fit a path, by its first segment, in table order, so a request is
    // matched against the few that share its first segment rather than the whole table. A pattern
    // whose first segment is a capture is in every bucket and in other_first_ (the candidates of
    // a first segment no literal names). Indices into routes_, valid however the router moves.
    struct first_segment_bucket {
        std::string_view first;
        std::vector<std::size_t> patterns;
    };
    const std::vector<std::size_t>& candidates(std::string_view first) const noexcept;

    std::vector<compiled> routes_;
    std::vector<first_segment_bucket> by_first_;
    std::vector<std::size_t> other_first_;
};

}  // namespace wheelhouse::app
