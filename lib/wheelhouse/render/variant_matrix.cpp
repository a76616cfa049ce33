#include "wheelhouse/render/variant_matrix.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <boost/json.hpp>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/catalog/variant_view.hpp"
#include "wheelhouse/render/json_fields.hpp"

namespace wheelhouse::render {
namespace {

namespace json = boost::json;

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

struct natural_order {
    bool operator()(const std::string& a, const std::string& b) const noexcept { return natural_less(a, b); }
};
using axis = std::set<std::string, natural_order>;

void add_members(axis& values, std::string_view members, char separator) {
    while (!members.empty()) {
        const auto end = members.find(separator);
        values.emplace(members.substr(0, end));
        if (end == std::string_view::npos) break;
        members.remove_prefix(end + 1);
    }
}

json::array to_array(const axis& values) {
    json::array out;
    for (const auto& value : values) out.emplace_back(value);
    return out;
}

// One release of the project: versions that differ only in their local label.
struct release_group {
    std::optional<pep440::version> release;  // absent when the text does not parse (ingest refuses those)
    std::string text;
    std::vector<std::size_t> files;
};

bool newer_first(const release_group& a, const release_group& b) {
    if (a.release && b.release) {
        const auto order = pep440::compare(*a.release, *b.release);
        if (order != 0) return order > 0;
    } else if (a.release.has_value() != b.release.has_value()) {
        return a.release.has_value();
    }
    return a.text > b.text;
}

// The column a build goes in: its family in selector words, "any" for a pure wheel, "no
// variant" for a platform build whose name says nothing of the machine (a win_amd64 build
// without a label runs on no more machines than a labelled one).
std::string family_of(const catalog::file_record& file) {
    if (file.type == catalog::package_type::sdist) return "sdist";
    if (file.variant_label) return "PEP 825 · " + *file.variant_label;
    if (auto label = catalog::family_label(file.variant); !label.empty()) return label;
    return file.platform_tag == "any" ? "any" : "no variant";
}

// The other spellings of the build's first selector, each answered by a 301 to it.
json::array spellings_of(const std::vector<std::string>& selectors) {
    json::array out;
    if (selectors.empty()) return out;
    const auto first = variants::parse_selector(selectors.front());
    if (!first) return out;
    for (auto& spelling : variants::other_spellings(*first)) out.emplace_back(std::move(spelling));
    return out;
}

// Every value each axis takes across the project's files.
class matrix_axes {
public:
    void add(const catalog::file_record& file) {
        if (file.type == catalog::package_type::wheel) {  // an sdist has no tags
            add_members(python_, file.python_tag, '.');
            add_members(abi_, file.abi_tag, '.');
            add_members(platform_, file.platform_tag, '.');
        }
        const auto& variant = file.variant;
        if (variant.cuda) cuda_.insert(*variant.cuda);
        if (variant.rocm) rocm_.insert(*variant.rocm);
        if (variant.torch) torch_.insert(*variant.torch);
        if (variant.sm) add_members(sm_, *variant.sm, ',');
        if (variant.cxx11abi) cxx11abi_.insert(*variant.cxx11abi);
        has_cuda_ = has_cuda_ || variant.cuda.has_value();
        has_rocm_ = has_rocm_ || variant.rocm.has_value();
        has_xpu_ = has_xpu_ || variant.xpu;
        has_cpu_ = has_cpu_ || variant.cpu;
    }

    json::object to_json() const {
        json::array abi_values;
        for (const bool value : cxx11abi_) abi_values.emplace_back(value);
        json::array accelerators;
        for (const auto& [present, name] : {std::pair{has_cuda_, "cuda"}, std::pair{has_rocm_, "rocm"},
                                            std::pair{has_xpu_, "xpu"}, std::pair{has_cpu_, "cpu"}}) {
            if (present) accelerators.emplace_back(name);
        }
        return json::object{{"python", to_array(python_)}, {"abi", to_array(abi_)},
                            {"platform", to_array(platform_)}, {"accelerator", std::move(accelerators)},
                            {"cuda", to_array(cuda_)}, {"rocm", to_array(rocm_)},
                            {"torch", to_array(torch_)}, {"sm", to_array(sm_)},
                            {"cxx11abi", std::move(abi_values)}};
    }

private:
    axis python_, abi_, platform_, cuda_, rocm_, torch_, sm_;
    std::set<bool> cxx11abi_;
    bool has_cuda_ = false, has_rocm_ = false, has_xpu_ = false, has_cpu_ = false;
};

// The files grouped by release, newest first; within one, by filename.
std::vector<release_group> releases_of(std::span<const catalog::file_record> files) {
    std::vector<release_group> releases;
    std::map<std::string, std::size_t> release_index;
    for (std::size_t index = 0; index < files.size(); ++index) {
        const auto& version = files[index].normalized_version;
        std::string release_text = version.substr(0, version.find('+'));
        auto [slot, inserted] = release_index.try_emplace(release_text, releases.size());
        if (inserted) {
            auto parsed = pep440::parse(release_text);
            releases.push_back({parsed ? std::optional(std::move(*parsed)) : std::nullopt, std::move(release_text), {}});
        }
        releases[slot->second].files.push_back(index);
    }
    std::sort(releases.begin(), releases.end(), newer_first);
    for (auto& group : releases) {
        std::sort(group.files.begin(), group.files.end(),
                  [&](std::size_t a, std::size_t b) { return files[a].filename < files[b].filename; });
    }
    return releases;
}

json::object build_json(const catalog::file_record& file, const std::vector<std::string>& selectors,
                        const link_options& links) {
    json::object build = file_json(file);
    build["version"] = file.normalized_version;
    build["family"] = family_of(file);
    json::array reaching;
    for (const auto& name : selectors) reaching.emplace_back(name);
    build["selectors"] = std::move(reaching);
    build["spellings"] = spellings_of(selectors);
    build["url"] = file_url(file, links);
    return build;
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) noexcept {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (is_digit(a[i]) && is_digit(b[j])) {
            const auto start_a = i, start_b = j;
            while (i < a.size() && is_digit(a[i])) ++i;
            while (j < b.size() && is_digit(b[j])) ++j;
            auto run_a = a.substr(start_a, i - start_a);
            auto run_b = b.substr(start_b, j - start_b);
            while (run_a.size() > 1 && run_a.front() == '0') run_a.remove_prefix(1);
            while (run_b.size() > 1 && run_b.front() == '0') run_b.remove_prefix(1);
            if (run_a.size() != run_b.size()) return run_a.size() < run_b.size();
            if (run_a != run_b) return run_a < run_b;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
    }
    if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
    return a < b;  // "09" and "9" differ only in zeros: text decides, so the order stays strict
}

std::string variant_matrix_json(const catalog::project_record& project, std::span<const catalog::file_record> files,
                                const link_options& links) {
    const auto selectors = catalog::reaching_selectors(files);
    matrix_axes axes;
    for (const auto& file : files) axes.add(file);
    json::array versions;
    for (auto& group : releases_of(files)) {
        json::array builds;
        builds.reserve(group.files.size());
        for (const auto index : group.files) builds.push_back(build_json(files[index], selectors[index], links));
        versions.push_back(json::object{{"version", group.text}, {"builds", std::move(builds)}});
    }
    json::object page;
    page["name"] = project.name;
    page["display_name"] = project.display_name;
    page["status"] = catalog::to_string(project.status);
    page["axes"] = axes.to_json();
    page["versions"] = std::move(versions);
    return json::serialize(page);
}

}  // namespace wheelhouse::render
