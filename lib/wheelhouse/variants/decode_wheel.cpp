// decode() for a whole wheel, apart from the rest so that it is the only part of the variants
// that needs the PEP 427 filename type.

#include <string>
#include <type_traits>
#include <variant>

#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::variants {
namespace {

// The label as the filename writes it; the parsed parts only when the text has no '+'.
std::string local_label_of(const pep427::wheel_filename& wheel) {
    const auto plus = wheel.version_text.find('+');
    if (plus != std::string::npos) return wheel.version_text.substr(plus + 1);
    std::string label;
    for (const auto& part : wheel.version.local) {
        if (!label.empty()) label.push_back('.');
        std::visit(
            [&](const auto& value) {
                if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) label += value;
                else label += std::to_string(value);
            },
            part);
    }
    return label;
}

template <class T>
void fill_absent(std::optional<T>& slot, const std::optional<T>& fallback) {
    if (!slot) slot = fallback;
}

}  // namespace

build_variant decode(const pep427::wheel_filename& wheel) {
    build_variant variant = decode_local_label(local_label_of(wheel));
    if (!wheel.build) return variant;
    // A hand-made build_tag may lack its text; number and suffix say the same.
    const std::string& text = wheel.build->text;
    const build_variant from_tag =
        decode_build_tag(text.empty() ? std::to_string(wheel.build->number) + wheel.build->suffix : text);
    if (!variant.torch) {
        variant.torch = from_tag.torch;
        variant.torch_and_higher = from_tag.torch_and_higher;
    }
    fill_absent(variant.cuda, from_tag.cuda);
    fill_absent(variant.sm, from_tag.sm);
    fill_absent(variant.cxx11abi, from_tag.cxx11abi);
    fill_absent(variant.rocm, from_tag.rocm);
    fill_absent(variant.git_hash, from_tag.git_hash);
    fill_absent(variant.build_date, from_tag.build_date);
    variant.cpu = variant.cpu || from_tag.cpu;
    variant.xpu = variant.xpu || from_tag.xpu;
    return variant;
}

}  // namespace wheelhouse::variants
