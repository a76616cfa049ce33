#include "wheelhouse/variants/build_variant.hpp"

#include <boost/json.hpp>

namespace wheelhouse::variants {

bool build_variant::empty() const noexcept {
    return !cuda && !sm && !torch && !torch_and_higher && !cxx11abi && !rocm && !cpu && !xpu && !git_hash &&
           !build_date;
}

boost::json::object to_json(const build_variant& variant) {
    boost::json::object out;
    auto put = [&](const char* key, const std::optional<std::string>& value) {
        if (value) out[key] = *value;
    };
    put("cuda", variant.cuda);
    put("sm", variant.sm);
    put("torch", variant.torch);
    if (variant.torch_and_higher) out["torch_and_higher"] = true;
    if (variant.cxx11abi) out["cxx11abi"] = *variant.cxx11abi;
    put("rocm", variant.rocm);
    if (variant.cpu) out["cpu"] = true;
    if (variant.xpu) out["xpu"] = true;
    put("git_hash", variant.git_hash);
    put("build_date", variant.build_date);
    if (!variant.unparsed.empty()) {
        boost::json::array pieces;
        for (const auto& piece : variant.unparsed) pieces.emplace_back(piece);
        out["unparsed"] = std::move(pieces);
    }
    return out;
}

}  // namespace wheelhouse::variants
