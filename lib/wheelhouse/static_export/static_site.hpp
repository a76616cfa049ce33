#pragma once
// `wheelhouse export`: the index as static files, for GitHub Pages, a CDN or an object store.
//   OUT/simple/index.html, index.json                    the project list, as /simple/ serves it
//   OUT/simple/<project>/index.html, index.json          each project page
//   OUT/variants/<selector>/simple/…                     the same for each --variant, as the server's
//                                                        /variants/<selector>/simple/ (canonical spelling)
//   OUT/files/<sha256>/<filename>                        every wheel held locally, copied
//   OUT/files/<sha256>/<filename>.metadata               its METADATA (PEP 658)
// The paths are the server's own, so the same pip lines work with either, and the pages are
// the server's byte for byte, except:
//  - file links start with the base URL (`/` gives the server's own links, "/files/…");
//  - files the index does not hold (remote rows without a cached blob) link straight to their
//    remote URL, without core-metadata: a release host has no "<url>.metadata" beside them.
// The wheels are copied because a static host must serve the links it publishes; each copy is
// checked against its sha256. Built in a temporary folder and renamed into place when done.
//
// Thread safety: runs on the caller's thread; safe beside a running server. The whole export
// is one snapshot of the catalog, so its pages agree with each other: what is written meanwhile
// is not in it (and the WAL is not checkpointed past the snapshot until the export ends).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/static_export/files_base.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::catalog {
class catalog;
}
namespace wheelhouse::storage {
class blob_store;
}

namespace wheelhouse::static_export {

struct export_options {
    std::string base_url = "/";                   // where OUT will be served from
    std::vector<variants::selector> variants;     // variant indexes to write beside /simple/
};

struct export_report {
    std::filesystem::path location;
    std::size_t projects = 0;
    std::size_t pages = 0;           // HTML and JSON files written
    std::size_t wheels = 0;          // wheels copied
    std::size_t metadata_files = 0;
    std::size_t remote_links = 0;    // files linked at their remote URL
    std::uint64_t bytes = 0;
};

// Writes the export into `out`, which must be absent or an empty folder (`invalid`
// otherwise). A blob that is missing or does not match its sha256 stops the export
// (`internal`, naming the file: run `wheelhouse fsck`); nothing is left at `out` on failure.
result<export_report> export_site(const catalog::catalog& catalog, const storage::blob_store& store,
                                  const std::filesystem::path& out, const export_options& options);

}  // namespace wheelhouse::static_export
