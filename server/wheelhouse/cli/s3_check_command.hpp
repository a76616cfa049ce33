#pragma once
// wheelhouse s3-check --s3-endpoint URL --s3-bucket NAME [--s3-region R] [--s3-prefix P]
//                     [--s3-ca-bundle PEM] [--s3-credentials-file FILE]
// Proves a bucket will do for wheels before anything depends on it (issue 29): the credentials
// are accepted, an object goes in, its size reads back, a presigned URL serves it without
// credentials, the store refuses a body whose sha256 is not the one signed, and the object goes
// again. Each step is printed; the first that fails says what to fix and exits 1.

#include <CLI/App.hpp>

namespace wheelhouse::cli {

void add_s3_check_command(CLI::App& app);

}  // namespace wheelhouse::cli
