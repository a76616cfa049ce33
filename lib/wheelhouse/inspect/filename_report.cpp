#include "wheelhouse/inspect/filename_report.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <boost/json.hpp>

#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/text/utf8.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::inspect {
namespace {

boost::json::array to_array(const std::vector<std::string>& tags) {
    boost::json::array out;
    out.reserve(tags.size());
    for (const auto& tag : tags) out.emplace_back(tag);
    return out;
}

// "path" goes right after "filename", where a reader looks for it.
void add_path(boost::json::object& json, std::string_view path) {
    boost::json::object ordered;
    ordered.reserve(json.size() + 1);
    for (auto& member : json) {
        ordered.emplace(member.key(), std::move(member.value()));
        if (member.key() == "filename") ordered.emplace("path", text::replace_invalid_utf8(path));
    }
    json = std::move(ordered);
}

}  // namespace

boost::json::object describe(const pep427::wheel_filename& wheel) {
    boost::json::object json;
    json["filename"] = wheel.filename;
    json["name"] = wheel.name;
    json["normalized_name"] = wheel.normalized_name;
    json["version"] = wheel.version_text;
    json["normalized_version"] = wheel.version.to_string();
    json["public_version"] = wheel.version.public_string();
    if (const auto local = wheel.version.local_string(); !local.empty()) json["local"] = local;
    else json["local"] = nullptr;
    if (wheel.build) {
        json["build"] = boost::json::object{
            {"number", wheel.build->number}, {"suffix", wheel.build->suffix}, {"text", wheel.build->text}};
    } else {
        json["build"] = nullptr;
    }
    json["python_tags"] = to_array(wheel.python_tags);
    json["abi_tags"] = to_array(wheel.abi_tags);
    json["platform_tags"] = to_array(wheel.platform_tags);
    json["variant"] = variants::to_json(variants::decode(wheel));
    if (wheel.variant_label) json["variant_label"] = *wheel.variant_label;
    else json["variant_label"] = nullptr;
    return json;
}

boost::json::object describe(const pep625::sdist_filename& sdist) {
    boost::json::object json;
    json["filename"] = sdist.filename;
    json["packagetype"] = "sdist";
    json["name"] = sdist.name;
    json["normalized_name"] = sdist.normalized_name;
    json["version"] = sdist.version_text;
    json["normalized_version"] = sdist.version.to_string();
    json["public_version"] = sdist.version.public_string();
    if (const auto local = sdist.version.local_string(); !local.empty()) json["local"] = local;
    else json["local"] = nullptr;
    json["variant"] = boost::json::object{};  // an sdist builds for any machine
    return json;
}

boost::json::object describe_error(std::string_view filename, const error& failure) {
    return boost::json::object{{"filename", text::replace_invalid_utf8(filename)},
                               {"error", text::replace_invalid_utf8(describe(failure))}};
}

filename_report report(std::string_view argument) {
    const auto slash = argument.rfind('/');
    const std::string_view filename = slash == std::string_view::npos ? argument : argument.substr(slash + 1);

    filename_report out;
    if (filename.empty() && slash != std::string_view::npos) {
        out.json = describe_error(
            filename, invalid("the path " + text::quoted(argument) + " ends in '/': give a wheel file, not a directory"));
    } else if (auto parsed = distribution::parse_archive_name(filename)) {
        out.valid = true;
        out.json = std::visit([](const auto& name) { return describe(name); }, *parsed);
    } else {
        out.json = describe_error(filename, parsed.error());
    }
    if (slash != std::string_view::npos) add_path(out.json, argument);
    return out;
}

}  // namespace wheelhouse::inspect
