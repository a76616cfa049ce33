// Local labels and build tags decoded into variants (variants/decode). The first line is a
// local label, the second a build tag. Decoding never fails; beside memory safety:
// - a label decodes alike with or without its '+', in upper case, and in its PEP 440 normal form;
// - a decoded label re-encodes consistently: the variant written back as a label in the README's
//   token spellings decodes to the same machine (and hash and date);
// - a build tag decodes to torch and CUDA together or to nothing, and re-encodes the same way.

#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace {

using wheelhouse::variants::build_variant;
using wheelhouse::variants::decode_build_tag;
using wheelhouse::variants::decode_local_label;

std::string without_dots(std::string_view dotted) {
    std::string out;
    for (char c : dotted) {
        if (c != '.') out.push_back(c);
    }
    return out;
}

// CUDA as the decoder reads it back: "cu" + Mm or MMm digits where they say it (not "cu15",
// a major alone), else "cu<major>.<minor>".
std::string cuda_token(std::string_view cuda) {
    const auto dot = cuda.find('.');
    if (dot == std::string_view::npos) return "cu" + std::string(cuda);
    const auto major = cuda.substr(0, dot), minor = cuda.substr(dot + 1);
    if (minor.size() == 1 && (major.size() == 2 || (major.size() == 1 && major != "1"))) return "cu" + without_dots(cuda);
    return "cu" + std::string(major) + "." + std::string(minor);
}

std::string encode(const build_variant& v) {
    std::vector<std::string> tokens;
    if (v.cuda) tokens.push_back(cuda_token(*v.cuda));
    if (v.sm) {
        for (auto arch : wheelhouse::fuzz::split(*v.sm, ',')) tokens.push_back("sm" + without_dots(arch));
    }
    if (v.torch) tokens.push_back("torch" + *v.torch + (v.torch_and_higher ? "andhigher" : ""));
    if (v.cxx11abi) tokens.emplace_back(*v.cxx11abi ? "cxx11abi1" : "cxx11abi0");
    if (v.rocm) tokens.push_back("rocm" + *v.rocm);
    if (v.cpu) tokens.emplace_back("cpu");
    if (v.xpu) tokens.emplace_back("xpu");
    if (v.git_hash) tokens.push_back("g" + *v.git_hash);
    if (v.build_date) tokens.push_back("d" + *v.build_date);
    std::string out;
    for (const auto& token : tokens) out += (out.empty() ? "" : ".") + token;
    return out;
}

std::string describe(const build_variant& v) { return encode(v) + " unparsed " + std::to_string(v.unparsed.size()); }

bool same_decoded(const build_variant& a, const build_variant& b) {
    return a.cuda == b.cuda && a.sm == b.sm && a.torch == b.torch && a.torch_and_higher == b.torch_and_higher &&
           a.cxx11abi == b.cxx11abi && a.rocm == b.rocm && a.cpu == b.cpu && a.xpu == b.xpu &&
           a.git_hash == b.git_hash && a.build_date == b.build_date;
}

void check_label(std::string_view label) {
    const build_variant decoded = decode_local_label(label);
    const std::string text(label);
    if (label.find('+') == std::string_view::npos) {
        WHEELHOUSE_FUZZ_CHECK(decode_local_label("+" + text) == decoded, text + ": '+' changes the decoding");
    }
    std::string upper = text;
    for (char& c : upper) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    WHEELHOUSE_FUZZ_CHECK(decode_local_label(upper) == decoded, text + ": case changes the decoding");
    // A local label as PEP 440 writes it ([a-z0-9.]); pep440::parse would also trim whitespace.
    const bool label_characters = std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    });
    if (auto version = wheelhouse::pep440::parse("0+" + text); label_characters && version && !version->local.empty()) {
        const std::string normal = version->local_string();
        WHEELHOUSE_FUZZ_CHECK(decode_local_label(normal) == decoded,
                              text + " decodes unlike its normal form " + normal);
    }
    const std::string encoded = encode(decoded);
    const build_variant again = decode_local_label(encoded);
    WHEELHOUSE_FUZZ_CHECK(same_decoded(again, decoded) && again.unparsed.empty(),
                          text + " decoded as " + describe(decoded) + " re-encoded " + encoded + " decodes as " +
                              describe(again));
}

void check_build_tag(std::string_view tag) {
    const build_variant decoded = decode_build_tag(tag);
    WHEELHOUSE_FUZZ_CHECK(decoded.torch.has_value() == decoded.cuda.has_value(), std::string(tag));
    WHEELHOUSE_FUZZ_CHECK(!decoded.sm && !decoded.cxx11abi && !decoded.rocm && !decoded.cpu && !decoded.xpu &&
                              !decoded.torch_and_higher && decoded.unparsed.empty(),
                          std::string(tag));
    if (!decoded.torch) return;
    const std::string encoded = without_dots(*decoded.torch) + "." + without_dots(*decoded.cuda);
    WHEELHOUSE_FUZZ_CHECK(decode_build_tag(encoded) == decoded, std::string(tag) + " re-encoded as " + encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto lines = wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data, size), '\n');
    check_label(lines[0]);
    if (lines.size() > 1) check_build_tag(lines[1]);
    return 0;
}
