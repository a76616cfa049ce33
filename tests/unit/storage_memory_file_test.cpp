#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "wheelhouse/storage/memory_file.hpp"

using namespace wheelhouse;

TEST_CASE("memory file: holds the bytes, sealed against any change", "[storage][memory_file]") {
    const std::string bytes(storage::memory_file_threshold + 5, 'p');
    auto file = storage::sealed_memory_file(bytes);
    REQUIRE(file);
    struct stat info {};
    REQUIRE(::fstat(file->get(), &info) == 0);
    CHECK(static_cast<std::size_t>(info.st_size) == bytes.size());
    std::string back(bytes.size(), '\0');
    CHECK(::pread(file->get(), back.data(), back.size(), 0) == static_cast<ssize_t>(bytes.size()));
    CHECK(back == bytes);
    CHECK(::pwrite(file->get(), "x", 1, 0) < 0);  // sealed
    CHECK(::ftruncate(file->get(), 0) != 0);
}

TEST_CASE("memory file: at most most_memory_files open at once, a place freed when one closes",
          "[storage][memory_file]") {
    std::vector<std::shared_ptr<storage::descriptor>> open;
    for (std::size_t i = 0; i < storage::most_memory_files; ++i) {
        open.push_back(storage::sealed_memory_file("page"));
        REQUIRE(open.back());
    }
    CHECK_FALSE(storage::sealed_memory_file("one past the cap"));
    const int closed = open.back()->get();
    open.pop_back();
    CHECK(::fcntl(closed, F_GETFD) < 0);  // the descriptor went with its last owner
    auto again = storage::sealed_memory_file("in the freed place");
    REQUIRE(again);
    CHECK_FALSE(storage::sealed_memory_file("past the cap again"));
}
