#include "wheelhouse/render/json_fields.hpp"

#include <boost/json.hpp>

#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/text/utf8.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::render {

namespace json = boost::json;

json::value time_or_null(std::int64_t unix_milliseconds) {
    if (unix_milliseconds == 0) return nullptr;
    return json::string(iso8601_utc(unix_milliseconds));
}

json::value time_or_null(const std::optional<std::int64_t>& unix_milliseconds) {
    if (!unix_milliseconds) return nullptr;
    return time_or_null(*unix_milliseconds);
}

json::value text_or_null(const std::optional<std::string>& value) {
    if (!value) return nullptr;
    return json::string(text::replace_invalid_utf8(*value));
}

json::object file_json(const catalog::file_record& file) {
    json::object out;
    out["filename"] = file.filename;
    out["packagetype"] = catalog::to_string(file.type);
    out["python_tag"] = file.python_tag;
    out["abi_tag"] = file.abi_tag;
    out["platform_tag"] = file.platform_tag;
    out["build_tag"] = text_or_null(file.build_tag);
    out["variant"] = variants::to_json(file.variant);
    out["pep825"] = pep825_json(file);
    out["sha256"] = file.sha256;
    out["size"] = file.size;
    out["upload_time"] = time_or_null(file.upload_time_ms);
    out["requires_python"] = text_or_null(file.requires_python);
    out["yanked"] = file.yanked() ? json::value(*file.yanked_reason) : json::value(false);
    return out;
}

json::value pep825_json(const catalog::file_record& file) {
    if (!file.variant_label) return nullptr;
    json::array properties;
    for (auto& property : pep825::property_strings(file.variant_properties)) properties.emplace_back(std::move(property));
    return json::object{{"label", *file.variant_label}, {"properties", std::move(properties)}};
}

}  // namespace wheelhouse::render
