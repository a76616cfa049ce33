#pragma once
// Which builds a token may publish, judged by their labels: beyond PyPI's trusted publishing, a
// publisher may be limited to a label pattern, so the CI job that builds for CUDA 13.0 cannot
// publish a CUDA 12.8 wheel. The check lives here, in lib, so every path that adds a file under a
// token (an upload, a registration, the ingester) asks the same question.

#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

// A label pattern as an admin writes it, checked and normalised: a leading '+' dropped, ASCII
// letters lower-cased, and only letters, digits, '.', '_' and the wildcards '*' and '?' left
// ("+CU130*" -> "cu130*"). '*' alone admits every build, one without a label too.
result<std::string> normalize_label_pattern(std::string_view pattern);

// The labels a file's name carries: its local version label as PEP 440 normalises it
// ("+CU130_Torch2.10" -> "cu130.torch2.10"), and a PEP 825 variant wheel's variant label
// ("cu128_sm90", "null"). A file may carry both, one, or none.
struct file_labels {
    std::string project;              // PEP 503-normalised
    std::vector<std::string> labels;  // empty: the file carries no label
};

// Whether `grant` may publish the file named `filename` (a wheel or an sdist). Success when the
// grant has no build limits. Else some limit of the file's project must admit every label the
// file carries; a file without any label is judged as the empty label, which only a pattern
// such as '*' admits. forbidden, with the patterns and the labels, when none does; the
// filename's own refusal (invalid) when it names no file, since a limited token fails closed.
// Thread safety: pure.
result<void> permits_file(const token_grant& grant, std::string_view filename);

// The project and labels of `filename`, or why it names no distribution file.
result<file_labels> labels_of_file(std::string_view filename);

}  // namespace wheelhouse::auth
