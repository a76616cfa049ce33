#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "test_support.hpp"
#include "wheelhouse/storage/descriptor.hpp"

using namespace wheelhouse;

TEST_CASE("write_all: every byte of a buffer larger than one write takes, and 0", "[storage][descriptor]") {
    testing::temp_dir folder;
    const auto path = folder.path() / "out";
    std::string bytes(3 << 20, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + i / 251);
    {
        storage::descriptor file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        REQUIRE(file);
        CHECK(storage::write_all(file.get(), bytes) == 0);
        CHECK(storage::write_all(file.get(), {}) == 0);
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream back;
    back << in.rdbuf();
    CHECK(back.str() == bytes);
}

TEST_CASE("write_all: the errno of the write that failed, for a full device and a read-only descriptor",
          "[storage][descriptor]") {
    storage::descriptor full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
    REQUIRE(full);
    CHECK(storage::write_all(full.get(), "bytes") == ENOSPC);
    storage::descriptor read_only(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    REQUIRE(read_only);
    CHECK(storage::write_all(read_only.get(), "bytes") == EBADF);
}
