// Decoding of local labels and build tags. The grammar, and the real names it was drawn from:
//
// The label is first put in its PEP 440 normal form (lower case, '-' and '_' become '.', leading
// zeros dropped from all-digit segments), so a label as written and as normalised decode alike.
// It is then read left to right. At the start of each '.'-separated segment:
//   - a whole segment can be a git hash or a build date:
//       g<7-40 hex>            setuptools_scm "g1a2b3c4"
//       git<7-40 hex>          PyTorch source builds "2.7.0a0+gitb98af95"
//       git<YYYYMMDD>, d<YYYYMMDD>, <YYYYMMDD>   dates ("+g1a2b3c4.d20250101"); only real dates
//       <YYYYMMDD> or d<YYYYMMDD> followed by a chain: nightlies' "+20250301cu128"; the date
//                              must be exactly eight digits and a real day, the chain must start
//                              with a token below, else the segment is unparsed whole
//       <7-40 hex>             with a digit and a letter: DeepSpeed "+e1560d84", xformers "+3abeaa9e"
//   - otherwise a chain of tokens written together ("cu130sm89torch2.10.0"):
//       cu<N>, cuda<N>         CUDA. Two digits starting with 1 are a major only (cu12 -> "12"),
//                              other two digits are major.minor (cu92 -> "9.2", cu80 -> "8.0"),
//                              three digits are MM.m (cu128 -> "12.8", cu130 -> "13.0");
//                              a major of one or two digits may carry a dotted minor of one or
//                              two (cu12.8, cuda9.2, cuda12.10; jaxlib's cuda12.cudnn89 stays
//                              CUDA 12), and then a dotted patch of one to three digits, which
//                              no build depends on and is dropped (nvcc's "V12.8.93").
//       c<NNN>                 CUDA after a torch token only, three digits starting with 1:
//                              "torch2.9c128". Anywhere else, or with other digits, a 'c' is too
//                              many things (a build counter, "c12": a major or not?) to read.
//       sm<NN>[a|f], sm<NNN>[a|f]   GPU architecture: sm89 -> "8.9", sm120 -> "12.0", sm90a ->
//                              "9.0a"; several archs are kept in order, comma-separated. Also
//                              as nvidia-smi prints it (sm8.9, sm12.0) and nvcc writes it (sm_89).
//       torch<M.m[.p]>         nunchaku/flash-attn "torch2.10.0", "torch2.7"; components of at
//                              most two digits, at most three components.
//       torch<digits>          written together: torch28 -> "2.8", NATTEN's torch240 -> "2.4.0",
//                              torch2100 -> "2.10.0" (one-digit major and patch).
//         ...andhigher         SageAttention's "torch2.9.0andhigher": torch is a lower bound.
//       pt<digits>             PyG: pt28 -> "2.8", pt113 -> "1.13", pt210 -> "2.10".
//       pt<M.m[.p]>            dotted as torch<...>: "pt2.6.0cu126".
//       cxx11abi[true|false|1|0], cxx11.abi, cxx11   C++11 ABI; without a value it means true.
//       rocm<M[.m[.p]]>        rocm6.4, rocm6.2.4.
//       cpu, xpu
//     A chain that stops at an unknown character leaves the rest of its segment unparsed:
//     "cpuavx2" is cpu plus "avx2"; a segment that starts unknown is unparsed whole.
// A field met a second time with a different value is kept in `unparsed` as written (sm excepted,
// which collects every architecture); the same value again is simply ignored.

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelhouse/variants/build_variant.hpp"

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::variants {
namespace {

constexpr std::size_t shortest_hash = 7;
constexpr std::size_t longest_hash = 40;  // a full SHA-1
constexpr std::size_t date_length = 8;     // YYYYMMDD

bool is_separator(char c) noexcept { return c == '.' || c == '-' || c == '_'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_hex_letter(char c) noexcept { return c >= 'a' && c <= 'f'; }
bool is_hex(char c) noexcept { return is_digit(c) || is_hex_letter(c); }
using text::to_lower;

bool all_digits(std::string_view text) noexcept {
    if (text.empty()) return false;
    for (char c : text) {
        if (!is_digit(c)) return false;
    }
    return true;
}

// The length of the run of digits at `pos`.
std::size_t digits_at(std::string_view text, std::size_t pos) noexcept {
    std::size_t end = pos;
    while (end < text.size() && is_digit(text[end])) ++end;
    return end - pos;
}

std::string without_leading_zeros(std::string_view digits) {
    while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
    return std::string(digits);
}

// The PEP 440 normal form of a local label, without its '+'. Empty segments (which PEP 440
// would refuse) are dropped so that any input still has one reading.
std::string normalize_label(std::string_view label) {
    // Separators before the '+' go with their empty segments; they must not hide it.
    while (!label.empty() && is_separator(label.front())) label.remove_prefix(1);
    if (!label.empty() && label.front() == '+') label.remove_prefix(1);
    std::string out;
    std::size_t pos = 0;
    while (pos < label.size()) {
        if (is_separator(label[pos])) {
            ++pos;
            continue;
        }
        std::size_t end = pos;
        while (end < label.size() && !is_separator(label[end])) ++end;
        const std::string_view segment = label.substr(pos, end - pos);
        if (!out.empty()) out.push_back('.');
        if (all_digits(segment)) {
            out += without_leading_zeros(segment);
        } else {
            for (char c : segment) out.push_back(to_lower(c));
        }
        pos = end;
    }
    return out;
}

bool starts_with(std::string_view text, std::size_t pos, std::string_view prefix) noexcept {
    return text.substr(pos, prefix.size()) == prefix;
}

bool is_leap_year(int year) noexcept { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

// Eight digits that name a real day of this century: 20250101 yes, 20251301 no.
bool is_build_date(std::string_view text) noexcept {
    if (text.size() != date_length || !all_digits(text)) return false;
    auto number = [&](std::size_t from, std::size_t count) {
        int value = 0;
        for (std::size_t i = from; i < from + count; ++i) value = value * 10 + (text[i] - '0');
        return value;
    };
    const int year = number(0, 4), month = number(4, 2), day = number(6, 2);
    if (year < 2000 || year > 2099 || month < 1 || month > 12 || day < 1) return false;
    constexpr std::array<int, 12> days_in_month{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int last = days_in_month[static_cast<std::size_t>(month - 1)] + (month == 2 && is_leap_year(year) ? 1 : 0);
    return day <= last;
}

// 7 to 40 hex digits: an abbreviated or full git commit.
bool is_hex_hash(std::string_view text) noexcept {
    if (text.size() < shortest_hash || text.size() > longest_hash) return false;
    for (char c : text) {
        if (!is_hex(c)) return false;
    }
    return true;
}

// A hash written without a prefix must mix digits and letters to be told from a number or a word.
bool is_bare_hash(std::string_view text) noexcept {
    return is_hex_hash(text) && std::any_of(text.begin(), text.end(), is_digit) &&
           std::any_of(text.begin(), text.end(), is_hex_letter);
}

// CUDA written as digits alone, as in "cu128" or the build tag suffix ".129".
std::optional<std::string> cuda_from_digits(std::string_view digits) {
    if (!all_digits(digits) || digits.front() == '0') return std::nullopt;
    if (digits.size() == 2) {
        // cu10..cu13 are majors (flash-attn's "cu12"); cu92 and cu80 are the old 9.2 and 8.0.
        if (digits.front() == '1') return std::string(digits);
        return std::string{digits[0], '.', digits[1]};
    }
    if (digits.size() == 3) return std::string{digits[0], digits[1], '.', digits[2]};
    return std::nullopt;
}

// torch written as digits alone, as in "torch240" or the build tag "280": the major and the
// patch are one digit each, so four digits hold a two-digit minor (2100 -> 2.10.0).
std::optional<std::string> torch_from_digits(std::string_view digits) {
    if (!all_digits(digits) || digits.front() == '0') return std::nullopt;
    switch (digits.size()) {
    case 1: return std::string(digits);
    case 2: return std::string{digits[0], '.', digits[1]};
    case 3: return std::string{digits[0], '.', digits[1], '.', digits[2]};
    case 4:
        if (digits[1] == '0') return std::nullopt;
        return std::string{digits[0], '.', digits[1], digits[2], '.', digits[3]};
    default: return std::nullopt;
    }
}

enum class field { cuda, sm, torch, cxx11abi, rocm, cpu, xpu, git_hash, build_date };

struct token {
    field kind = field::cpu;
    std::size_t end = 0;      // one past the last character read
    std::string value;        // "12.8", "8.9", "2.10.0", "1" or "0" for cxx11abi, ...
    bool and_higher = false;  // torch only
};

// A dotted version at `pos`: up to `max_components` runs of one or two digits ("2.10.0").
// Returns the version without leading zeros and where it ends, or nothing when `pos` holds no digit.
struct dotted { std::string text; std::size_t end = 0; };
std::optional<dotted> read_dotted(std::string_view text, std::size_t pos, std::size_t max_components) {
    dotted out;
    std::size_t components = 0;
    std::size_t at = pos;
    while (components < max_components) {
        const std::size_t length = digits_at(text, at);
        if (length == 0 || length > 2) break;
        if (components > 0) out.text.push_back('.');
        out.text += without_leading_zeros(text.substr(at, length));
        ++components;
        at += length;
        out.end = at;
        // Only a dot followed by a short number continues the version; anything else ends it.
        if (at >= text.size() || text[at] != '.') break;
        const std::size_t next = digits_at(text, at + 1);
        if (next == 0 || next > 2) break;
        ++at;
    }
    if (components == 0) return std::nullopt;
    return out;
}

class label_reader {
public:
    explicit label_reader(std::string_view label) : text_(normalize_label(label)) {}

    build_variant read() {
        std::size_t pos = 0;
        while (pos < text_.size()) {
            if (is_separator(text_[pos])) {
                ++pos;
                continue;
            }
            const std::size_t segment_end = end_of_segment(pos);
            if (auto whole = read_whole_segment(std::string_view(text_).substr(pos, segment_end - pos))) {
                whole->end = segment_end;
                apply(*whole, pos);
                pos = segment_end;
                continue;
            }
            if (auto date = read_date_before_chain(pos)) {
                apply(*date, pos);
                pos = date->end;
            }
            pos = read_chain(pos);
        }
        return std::move(variant_);
    }

private:
    std::size_t end_of_segment(std::size_t pos) const noexcept {
        while (pos < text_.size() && !is_separator(text_[pos])) ++pos;
        return pos;
    }

    // Tokens written together from `pos`; returns where reading stopped.
    std::size_t read_chain(std::size_t pos) {
        bool after_torch = false;
        while (true) {
            auto next = read_chain_token(pos, after_torch);
            if (!next) {
                const std::size_t end = end_of_segment(pos);
                unparsed(pos, end);
                return end;
            }
            apply(*next, pos);
            after_torch = next->kind == field::torch;
            pos = next->end;
            if (pos >= text_.size() || is_separator(text_[pos])) return pos;
        }
    }

    // A nightly's date written before its chain ("20250301cu128", "d20250301cu128"): exactly
    // eight digits that are a real day, then a token. Returns the date, ending where the chain starts.
    std::optional<token> read_date_before_chain(std::size_t pos) const {
        const std::size_t digits_from = text_[pos] == 'd' ? pos + 1 : pos;
        if (digits_at(text_, digits_from) != date_length) return std::nullopt;
        const std::string_view date = std::string_view(text_).substr(digits_from, date_length);
        const std::size_t chain = digits_from + date_length;
        if (!is_build_date(date) || !token_starts_at(chain)) return std::nullopt;
        return token{field::build_date, chain, std::string(date)};
    }

    static std::optional<token> read_whole_segment(std::string_view segment) {
        if (segment.size() > 1 && segment.front() == 'g' && is_hex_hash(segment.substr(1)))
            return token{field::git_hash, 0, std::string(segment.substr(1))};
        if (segment.substr(0, 3) == "git") {
            const std::string_view rest = segment.substr(3);
            if (is_build_date(rest)) return token{field::build_date, 0, std::string(rest)};
            if (is_hex_hash(rest)) return token{field::git_hash, 0, std::string(rest)};
            return std::nullopt;
        }
        if (segment.size() == 1 + date_length && segment.front() == 'd' && all_digits(segment.substr(1))) {
            // setuptools_scm's date notation; never read as a hash when the date is impossible.
            if (!is_build_date(segment.substr(1))) return std::nullopt;
            return token{field::build_date, 0, std::string(segment.substr(1))};
        }
        if (is_build_date(segment)) return token{field::build_date, 0, std::string(segment)};
        if (is_bare_hash(segment)) return token{field::git_hash, 0, std::string(segment)};
        return std::nullopt;
    }

    // `after_torch`: the token before, in the same chain, was torch, which lets "c128" be CUDA.
    // Whether some token starts at `pos`: its own look past its end (an sm's suffix) cannot
    // change that, so it is skipped, and reading a label stays linear in its length.
    bool token_starts_at(std::size_t pos) const { return read_chain_token(pos, false, false).has_value(); }

    std::optional<token> read_chain_token(std::size_t pos, bool after_torch = false, bool look_ahead = true) const {
        const std::string_view text = text_;
        if (starts_with(text, pos, "cuda")) return read_cuda(pos + 4);
        if (starts_with(text, pos, "cu")) return read_cuda(pos + 2);
        if (starts_with(text, pos, "sm")) {
            // nvcc's "sm_89", which the normal form writes "sm.89".
            const bool spaced = pos + 3 < text.size() && is_separator(text[pos + 2]) && is_digit(text[pos + 3]);
            return read_sm(pos + (spaced ? 3 : 2), look_ahead);
        }
        if (starts_with(text, pos, "torch")) return read_torch(pos + 5);
        if (starts_with(text, pos, "pt")) return read_pt(pos + 2);
        if (starts_with(text, pos, "cxx11")) return read_cxx11(pos + 5);
        if (starts_with(text, pos, "rocm")) return read_rocm(pos + 4);
        if (starts_with(text, pos, "cpu")) return token{field::cpu, pos + 3, {}};
        if (starts_with(text, pos, "xpu")) return token{field::xpu, pos + 3, {}};
        if (after_torch && starts_with(text, pos, "c")) return read_c_cuda(pos + 1);
        return std::nullopt;
    }

    // "torch2.9c128": three digits starting with 1, ending the chain or followed by a token.
    std::optional<token> read_c_cuda(std::size_t pos) const {
        const std::size_t end = pos + 3;
        if (digits_at(text_, pos) != 3 || text_[pos] != '1') return std::nullopt;
        if (end < text_.size() && !is_separator(text_[end]) && !token_starts_at(end)) return std::nullopt;
        return token{field::cuda, end, *cuda_from_digits(std::string_view(text_).substr(pos, 3))};
    }

    std::optional<token> read_cuda(std::size_t pos) const {
        const std::string_view text = text_;
        const std::size_t length = digits_at(text, pos);
        const std::size_t end = pos + length;
        // A major of one or two digits may carry its minor after a dot: "cuda12.8", "cu9.2",
        // "cuda12.10" (but not "cuda12.cudnn89", nor "cu118.1", whose digits hold the minor).
        if ((length == 1 || length == 2) && text[pos] != '0' && end < text.size() && text[end] == '.') {
            const std::size_t minor = digits_at(text, end + 1);
            if (minor == 1 || minor == 2) {
                std::size_t after = end + 1 + minor;
                // nvcc's "V12.8.93": the patch is dropped, since no build depends on it.
                if (after < text.size() && text[after] == '.') {
                    const std::size_t patch = digits_at(text, after + 1);
                    if (patch >= 1 && patch <= 3) after += 1 + patch;
                }
                return token{field::cuda, after,
                             std::string(text.substr(pos, length)) + '.' +
                                 without_leading_zeros(text.substr(end + 1, minor))};
            }
        }
        auto cuda = cuda_from_digits(text.substr(pos, length));
        if (!cuda) return std::nullopt;
        return token{field::cuda, end, std::move(*cuda)};
    }

    std::optional<token> read_sm(std::size_t pos, bool look_ahead) const {
        const std::string_view text = text_;
        const std::size_t length = digits_at(text, pos);
        if (length == 0 || text[pos] == '0') return std::nullopt;
        std::string arch;
        std::size_t end = pos + length;
        // nvidia-smi's "8.9" and "12.0": a major of one digit (or two, starting with 1), a dot
        // and a one-digit minor. "sm80.9" stays sm80 beside an unreadable "9".
        const bool major_alone = length == 1 || (length == 2 && text[pos] == '1');
        if (major_alone && end < text.size() && text[end] == '.' && digits_at(text, end + 1) == 1) {
            arch = std::string(text.substr(pos, length)) + '.' + text[end + 1];
            end += 2;
        } else if (length == 2 || length == 3) {
            arch = std::string(text.substr(pos, length - 1)) + '.' + text[pos + length - 1];
        } else {
            return std::nullopt;
        }
        // "sm90a" / "sm100f": the arch-specific suffix, when what follows is a boundary or a token.
        if (look_ahead && end < text.size() && (text[end] == 'a' || text[end] == 'f')) {
            const std::size_t after = end + 1;
            if (after >= text.size() || is_separator(text[after]) || token_starts_at(after)) {
                arch += text[end];
                end = after;
            }
        }
        return token{field::sm, end, std::move(arch)};
    }

    std::optional<token> read_torch(std::size_t pos) const {
        const std::string_view text = text_;
        const std::size_t length = digits_at(text, pos);
        if (length == 0) return std::nullopt;
        token out{field::torch, 0, {}};
        std::optional<dotted> version;
        if (length == 1 && pos + 1 < text.size() && text[pos + 1] == '.') version = read_dotted(text, pos, 3);
        // A dotted read that stops at its first part ("torch0.129") is a single digit, read as
        // one: otherwise "torch0" would be torch 0 here and nothing when written alone.
        if (version && version->text.find('.') != std::string::npos) {
            out.value = std::move(version->text);
            out.end = version->end;
        } else {
            auto digits = torch_from_digits(text.substr(pos, length));
            if (!digits) return std::nullopt;
            out.value = std::move(*digits);
            out.end = pos + length;
        }
        if (starts_with(text, out.end, "andhigher")) {
            out.and_higher = true;
            out.end += 9;
        }
        return out;
    }

    std::optional<token> read_pt(std::size_t pos) const {
        const std::string_view digits = std::string_view(text_).substr(pos, digits_at(text_, pos));
        if (digits.empty() || digits.front() == '0') return std::nullopt;
        // Dotted, as torch's: "pt2.6.0cu126".
        if (digits.size() == 1 && pos + 1 < text_.size() && text_[pos + 1] == '.') {
            auto version = read_dotted(text_, pos, 3);
            if (version && version->text.find('.') != std::string::npos)
                return token{field::torch, version->end, std::move(version->text)};
        }
        if (digits.size() == 2) return token{field::torch, pos + 2, std::string{digits[0], '.', digits[1]}};
        if (digits.size() == 3 && digits[1] != '0')
            return token{field::torch, pos + 3, std::string{digits[0], '.', digits[1], digits[2]}};
        return std::nullopt;
    }

    std::optional<token> read_cxx11(std::size_t pos) const {
        const std::string_view text = text_;
        if (starts_with(text, pos, "abi")) {
            const std::size_t after = pos + 3;
            if (starts_with(text, after, "true")) return token{field::cxx11abi, after + 4, "1"};
            if (starts_with(text, after, "false")) return token{field::cxx11abi, after + 5, "0"};
            if (after < text.size() && (text[after] == '1' || text[after] == '0') && digits_at(text, after) == 1)
                return token{field::cxx11abi, after + 1, std::string(1, text[after])};
            return token{field::cxx11abi, after, "1"};
        }
        // PyTorch's "cpu.cxx11.abi" and IPEX's "2.1.0a0+cxx11.abi".
        if (starts_with(text, pos, ".abi") && (pos + 4 == text.size() || is_separator(text[pos + 4])))
            return token{field::cxx11abi, pos + 4, "1"};
        return token{field::cxx11abi, pos, "1"};  // torch_xla's "+cxx11"
    }

    std::optional<token> read_rocm(std::size_t pos) const {
        const std::string_view text = text_;
        const std::size_t length = digits_at(text, pos);
        if (length == 0 || text[pos] == '0') return std::nullopt;
        // "rocm62" could be 6.2 or 62: only a dotted or one-digit version is read, and a dotted
        // read that stops at its two-digit first part ("rocm10.git…") is "rocm10" again.
        auto version = read_dotted(text, pos, 3);
        if (!version || (length == 2 && version->text.find('.') == std::string::npos)) return std::nullopt;
        return token{field::rocm, version->end, std::move(version->text)};
    }

    // Records a token, or keeps its text unparsed when it contradicts what was read before.
    void apply(const token& read, std::size_t begin) {
        auto set = [&](std::optional<std::string>& slot) {
            if (!slot) slot = read.value;
            else if (*slot != read.value) unparsed(begin, read.end);
        };
        switch (read.kind) {
        case field::cuda: set(variant_.cuda); break;
        case field::rocm: set(variant_.rocm); break;
        case field::git_hash: set(variant_.git_hash); break;
        case field::build_date: set(variant_.build_date); break;
        case field::torch:
            if (!variant_.torch) {
                variant_.torch = read.value;
                variant_.torch_and_higher = read.and_higher;
            } else if (*variant_.torch != read.value || variant_.torch_and_higher != read.and_higher) {
                unparsed(begin, read.end);
            }
            break;
        case field::sm:
            if (!variant_.sm) {
                variant_.sm = read.value;
            } else if (!contains_arch(*variant_.sm, read.value)) {
                *variant_.sm += ',' + read.value;
            }
            break;
        case field::cxx11abi: {
            const bool value = read.value == "1";
            if (!variant_.cxx11abi) variant_.cxx11abi = value;
            else if (*variant_.cxx11abi != value) unparsed(begin, read.end);
            break;
        }
        case field::cpu: variant_.cpu = true; break;
        case field::xpu: variant_.xpu = true; break;
        }
    }

    static bool contains_arch(std::string_view list, std::string_view arch) noexcept {
        std::size_t pos = 0;
        while (pos <= list.size()) {
            std::size_t comma = list.find(',', pos);
            if (comma == std::string_view::npos) comma = list.size();
            if (list.substr(pos, comma - pos) == arch) return true;
            pos = comma + 1;
        }
        return false;
    }

    void unparsed(std::size_t begin, std::size_t end) {
        if (end > begin) variant_.unparsed.emplace_back(text_.substr(begin, end - begin));
    }

    std::string text_;
    build_variant variant_;
};

}  // namespace

build_variant decode_local_label(std::string_view label) { return label_reader(label).read(); }

build_variant decode_build_tag(std::string_view build_tag) {
    // SageAttention builds: "{torch major}{torch minor}{torch patch}.{cuda major}{cuda minor}",
    // 280.129 = torch 2.8.0 + CUDA 12.9.
    const std::size_t dot = build_tag.find('.');
    if (dot == std::string_view::npos) return {};
    const std::string_view torch_digits = build_tag.substr(0, dot);
    const std::string_view cuda_digits = build_tag.substr(dot + 1);
    if (torch_digits.size() < 3) return {};  // "1", "12": ordinary build numbers
    auto torch = torch_from_digits(torch_digits);
    auto cuda = cuda_from_digits(cuda_digits);
    if (!torch || !cuda) return {};
    build_variant variant;
    variant.torch = std::move(torch);
    variant.cuda = std::move(cuda);
    return variant;
}

}  // namespace wheelhouse::variants
