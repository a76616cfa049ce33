#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/storage/page_file.hpp"

using namespace wheelhouse;

namespace {

std::string contents(const storage::descriptor& file, std::size_t size) {
    std::string back(size + 1, '\0');
    const auto read = ::pread(file.get(), back.data(), back.size(), 0);
    back.resize(read < 0 ? 0 : static_cast<std::size_t>(read));
    return back;
}

}  // namespace

TEST_CASE("page file: without a folder, a memory file holding the bytes, sealed against any change",
          "[storage][page_file]") {
    const std::string bytes(storage::page_file_threshold + 5, 'p');
    auto file = storage::page_file(bytes);
    REQUIRE(file);
    struct stat info {};
    REQUIRE(::fstat(file->get(), &info) == 0);
    CHECK(static_cast<std::size_t>(info.st_size) == bytes.size());
    CHECK(contents(*file, bytes.size()) == bytes);
    CHECK(::pwrite(file->get(), "x", 1, 0) < 0);  // sealed
    CHECK(::ftruncate(file->get(), 0) != 0);
}

TEST_CASE("page file: in a folder, an unlinked file opened read-only, nothing left in the folder",
          "[storage][page_file]") {
    testing::temp_dir folder;
    const std::string bytes(storage::page_file_threshold + 7, 'q');
    auto file = storage::page_file(bytes, folder.path());
    REQUIRE(file);
    CHECK(contents(*file, bytes.size()) == bytes);
    CHECK((::fcntl(file->get(), F_GETFL) & O_ACCMODE) == O_RDONLY);
    CHECK(::pwrite(file->get(), "x", 1, 0) < 0);
    CHECK(::ftruncate(file->get(), 0) != 0);
    struct stat info {};
    REQUIRE(::fstat(file->get(), &info) == 0);
    CHECK(info.st_nlink == 0);  // no name, so no one else reaches it, and it goes with its descriptor
    CHECK(std::filesystem::is_empty(folder.path()));

    // A folder that is not there: the memory file instead, the same bytes.
    auto instead = storage::page_file(bytes, folder.path() / "missing");
    REQUIRE(instead);
    CHECK(contents(*instead, bytes.size()) == bytes);
    CHECK(::pwrite(instead->get(), "x", 1, 0) < 0);
}

TEST_CASE("page file: at most most_page_files() open at once, of either kind, a place freed when one closes",
          "[storage][page_file]") {
    testing::temp_dir folder;
    std::vector<std::shared_ptr<storage::descriptor>> open;
    for (std::size_t i = 0; i < storage::most_page_files(); ++i) {
        open.push_back(i % 2 == 0 ? storage::page_file("page") : storage::page_file("page", folder.path()));
        REQUIRE(open.back());
    }
    CHECK_FALSE(storage::page_file("one past the cap"));
    CHECK_FALSE(storage::page_file("one past the cap", folder.path()));
    const int closed = open.back()->get();
    open.pop_back();
    CHECK(::fcntl(closed, F_GETFD) < 0);  // the descriptor went with its last owner
    auto again = storage::page_file("in the freed place", folder.path());
    REQUIRE(again);
    CHECK_FALSE(storage::page_file("past the cap again"));
}
