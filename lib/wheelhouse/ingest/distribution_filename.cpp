#include "wheelhouse/ingest/distribution_filename.hpp"

#include "wheelhouse/error_text.hpp"

namespace wheelhouse::ingest {

result<distribution_filename> parse_distribution_filename(std::string_view filename) {
    if (pep625::looks_like_sdist(filename)) {
        auto sdist = pep625::parse_sdist_filename(filename);
        if (!sdist) return sdist.error();
        return distribution_filename{std::move(sdist).value()};
    }
    // Anything else is judged as a wheel, whose parser says a name must end in ".whl" or ".tar.gz".
    auto wheel = pep427::parse_wheel_filename(filename);
    if (!wheel) return wheel.error();
    return distribution_filename{std::move(wheel).value()};
}

const std::string& normalized_name_of(const distribution_filename& name) noexcept {
    return std::visit([](const auto& parsed) -> const std::string& { return parsed.normalized_name; }, name);
}

}  // namespace wheelhouse::ingest
