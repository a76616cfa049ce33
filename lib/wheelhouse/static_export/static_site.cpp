#include "wheelhouse/static_export/static_site.hpp"

#include <set>
#include <system_error>
#include <utility>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/render/simple_index.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/storage/file_copy.hpp"
#include "wheelhouse/storage/staging_dir.hpp"

namespace wheelhouse::static_export {
namespace {

// One index of pages: /simple/ or a variant's.
struct index_tree {
    std::filesystem::path folder;                // OUT/simple or OUT/variants/<selector>/simple
    std::optional<variants::selector> selector;
};

result<void> make_folder(const std::filesystem::path& folder) {
    std::error_code failure;
    std::filesystem::create_directories(folder, failure);
    if (failure) return make_error(error_kind::internal, "creating " + folder.string() + ": " + failure.message());
    return {};
}

// The bytes a static host can serve for `file`: a blob in the store. Remote rows without a
// cached blob have none, and are linked at their remote URL.
bool held_locally(const catalog::file_record& file, const storage::blob_store& store) {
    if (file.mode == catalog::download_mode::local || !file.remote_url) return true;
    return file.mode == catalog::download_mode::cache && store.has_blob(file.sha256);
}

class site_writer {
public:
    site_writer(const storage::blob_store& store, std::filesystem::path root, export_report& report)
        : store_(store), root_(std::move(root)), report_(report) {}

    result<void> write_page(const std::filesystem::path& folder, std::string_view name, std::string_view bytes) {
        if (auto made = make_folder(folder); !made) return made;
        if (auto written = storage::write_new_file(folder / name, bytes); !written) return written;
        ++report_.pages;
        report_.bytes += bytes.size();
        return {};
    }

    // Copies the wheel and its METADATA to files/<sha256>/<filename>, checking both digests. The
    // index's own files (`owned`) come from wherever it keeps them (a bucket); caches from blobs/.
    result<void> copy_file(const catalog::file_record& file, bool owned) {
        if (!copied_.insert(file.sha256 + "/" + file.filename).second) return {};
        const auto folder = root_ / "files" / file.sha256;
        if (auto made = make_folder(folder); !made) return made;
        const auto target = folder / file.filename;
        auto wheel = owned ? store_.copy_owned_out(file.sha256, file.size, target, 0444)
                           : storage::copy_file_hashed(store_.blob_path(file.sha256), target, 0444);
        if (!wheel) {
            // The export reads one snapshot of the catalog, so a file deleted since is still in
            // it, though its blob may be gone already.
            const std::string_view next = wheel.error().kind == error_kind::not_found
                                              ? "; if it was deleted during the export, export again, else run "
                                                "`wheelhouse fsck`"
                                              : "; run `wheelhouse fsck`";
            return make_error(error_kind::internal,
                              "cannot export " + file.filename + ": " + wheel.error().message + std::string(next));
        }
        if (wheel->sha256 != file.sha256) {
            return make_error(error_kind::internal, "cannot export " + file.filename + ": its blob hashes to " +
                                                        wheel->sha256 + ", not " + file.sha256 +
                                                        "; run `wheelhouse fsck`");
        }
        ++report_.wheels;
        report_.bytes += wheel->size;
        if (file.metadata_sha256.empty()) return {};
        auto metadata = storage::copy_file_hashed(store_.metadata_path(file.sha256),
                                                  folder / (file.filename + ".metadata"), 0444);
        if (!metadata) {
            return make_error(error_kind::internal, "cannot export the METADATA of " + file.filename + ": " +
                                                        metadata.error().message + "; run `wheelhouse fsck`");
        }
        if (metadata->sha256 != file.metadata_sha256) {
            return make_error(error_kind::internal, "cannot export the METADATA of " + file.filename +
                                                        ": it does not match the catalog's metadata_sha256; run "
                                                        "`wheelhouse fsck`");
        }
        ++report_.metadata_files;
        report_.bytes += metadata->size;
        return {};
    }

    // PEP 825: a release's variants.json at files/<sha256>/<filename>, as the server serves it.
    result<void> write_release_variants(const catalog::release_variants_file& release) {
        if (!copied_.insert(release.sha256 + "/" + release.filename).second) return {};
        const auto folder = root_ / "files" / release.sha256;
        if (auto made = make_folder(folder); !made) return made;
        if (auto written = storage::write_new_file(folder / release.filename, release.content); !written) return written;
        report_.bytes += release.content.size();
        return {};
    }

    void count_remote_link() { ++report_.remote_links; }

private:
    const storage::blob_store& store_;
    std::filesystem::path root_;
    export_report& report_;
    std::set<std::string> copied_;
};

// A project's pages in every tree, and the wheels they link to.
result<void> write_project(site_writer& writer, const storage::blob_store& store, const std::vector<index_tree>& trees,
                           const render::link_options& links, catalog::project_files found) {
    auto& [project, files, release_files] = found;
    std::vector<bool> owned;
    for (auto& file : files) {
        owned.push_back(file.mode == catalog::download_mode::local);
        if (held_locally(file, store)) {
            file.mode = catalog::download_mode::local;  // links go to our copy under files/
            continue;
        }
        // pip would look for "<remote URL>.metadata", which a release host does not have.
        file.metadata_sha256.clear();
        file.metadata_size = 0;
    }
    // The pages list no files of a quarantined project (PEP 792) and the server serves none.
    if (project.status != catalog::project_status::quarantined) {
        for (std::size_t i = 0; i < files.size(); ++i) {
            if (files[i].mode != catalog::download_mode::local) {
                writer.count_remote_link();
                continue;
            }
            if (auto copied = writer.copy_file(files[i], owned[i]); !copied) return copied;
        }
        for (const auto& release : release_files) {
            if (auto written = writer.write_release_variants(release); !written) return written;
        }
    }
    for (const auto& tree : trees) {
        const auto shown = render::index_files(files, tree.selector);
        const auto note = render::left_out_note(files, shown, project.name);
        const auto folder = tree.folder / project.name;
        const auto html = render::project_page_html(project, shown, links, release_files, note);
        if (auto written = writer.write_page(folder, "index.html", html); !written) return written;
        const auto json = render::project_page_json(project, shown, links, release_files, note);
        if (auto written = writer.write_page(folder, "index.json", json); !written) return written;
    }
    return {};
}

}  // namespace

result<export_report> export_site(const catalog::catalog& catalog, const storage::blob_store& store,
                                  const std::filesystem::path& out, const export_options& options) {
    auto files_base = files_base_for(options.base_url);
    if (!files_base) return files_base.error();
    auto staging = storage::staging_dir::create(out);
    if (!staging) return staging.error();
    const auto& root = staging->path();

    export_report report;
    report.location = staging->target();
    site_writer writer(store, root, report);

    std::vector<index_tree> trees{{root / "simple", std::nullopt}};
    for (const auto& selector : options.variants)
        trees.push_back({root / "variants" / selector.canonical() / "simple", selector});

    render::link_options links;
    links.files_base = *files_base;
    links.remote_files_direct = true;
    // One snapshot for the whole export, so its list and its project pages agree however the
    // catalog changes meanwhile (a project deleted between them would leave a dangling link).
    auto written = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto projects = catalog::read_project_list(db);
        if (!projects) return projects.error();
        const auto listing = render::project_listings(*projects);
        const auto list_html = render::project_list_html(listing);
        const auto list_json = render::project_list_json(listing);
        for (const auto& tree : trees) {
            if (auto page = writer.write_page(tree.folder, "index.html", list_html); !page) return page;
            if (auto page = writer.write_page(tree.folder, "index.json", list_json); !page) return page;
        }
        for (const auto& entry : *projects) {
            auto found = catalog::read_project_files(db, entry.project.name);
            if (!found) return found.error();
            if (!*found)  // listed in this very snapshot: cannot happen
                return make_error(error_kind::internal, "project " + entry.project.name + " vanished mid-snapshot");
            if (auto project = write_project(writer, store, trees, links, std::move(**found)); !project)
                return project;
            ++report.projects;
        }
        return {};
    });
    if (!written) return written.error();
    if (auto committed = staging->commit(); !committed) return committed.error();
    return report;
}

}  // namespace wheelhouse::static_export
