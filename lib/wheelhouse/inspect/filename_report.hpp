#pragma once
// What wheelhouse reads from a wheel's filename, as one JSON object: `wheelhouse inspect`
// prints it and the HTTP API serves it, so a CI job can check before uploading that a wheel
// lands in the variant it meant. Pure functions; the file itself is never opened.

#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::pep427 {
struct wheel_filename;
}

namespace wheelhouse::inspect {

// Every parsed field, in this order:
//   filename, name (as written), normalized_name (PEP 503), version (as written),
//   normalized_version, public_version, local (normalised label without '+', or null),
//   build (null, or {"number": 280, "suffix": ".129", "text": "280.129"}),
//   python_tags, abi_tags, platform_tags (arrays, compressed sets expanded, lower case),
//   variant (variants::to_json of the decoded variant; {} when nothing was decoded),
//   variant_label (PEP 825: the filename's variant label, "null" for the null variant, or null).
boost::json::object describe(const pep427::wheel_filename& wheel);

// {"filename": …, "error": message} for a name that was refused. A filename that is not
// valid UTF-8 is echoed with U+FFFD in place of the bad bytes, so the JSON stays valid.
boost::json::object describe_error(std::string_view filename, const error& failure);

struct filename_report {
    bool valid = false;       // false: `json` holds "error"
    boost::json::object json;
};

// One name as a person or a CI script gives it: a filename, or a path ("dist/x.whl", as a shell
// glob writes it) whose last component is checked and which is kept, as given, in "path".
filename_report report(std::string_view argument);

}  // namespace wheelhouse::inspect
