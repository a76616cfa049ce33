#pragma once
// Reads the tables in tests/data/ (format in tests/data/README.md), which the Python agreement
// test reads too, so one table drives both.

#include <cstddef>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#ifndef WHEELHOUSE_TEST_DATA_DIR
#error "tests/CMakeLists.txt defines WHEELHOUSE_TEST_DATA_DIR as the path of tests/data"
#endif

namespace wheelhouse::testing {

// "\t", "\n", "\r", "\\" and "\xHH" (one byte) as the bytes they stand for.
inline std::string unescape(std::string_view field) {
    std::string out;
    out.reserve(field.size());
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] != '\\' || i + 1 == field.size()) {
            out += field[i];
            continue;
        }
        const char kind = field[++i];
        if (kind == 't') out += '\t';
        else if (kind == 'n') out += '\n';
        else if (kind == 'r') out += '\r';
        else if (kind == '\\') out += '\\';
        else if (kind == 'x' && i + 2 < field.size()) {
            out += static_cast<char>(std::stoi(std::string(field.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            throw std::runtime_error("unknown escape '\\" + std::string(1, kind) + "' in a test table");
        }
    }
    return out;
}

struct tsv_row {
    std::size_t line = 0;             // in the file, for CAPTURE
    std::vector<std::string> fields;  // unescaped
};

class tsv_table {
public:
    explicit tsv_table(std::string_view file_name) {
        path_ = std::string(WHEELHOUSE_TEST_DATA_DIR) + "/" + std::string(file_name);
        std::ifstream in(path_, std::ios::binary);
        if (!in) throw std::runtime_error("cannot open test table " + path_);
        std::string line;
        std::size_t number = 0;
        while (std::getline(in, line)) {
            ++number;
            if (line.empty() || line.front() == '#') continue;
            std::vector<std::string> fields = split(line);
            if (columns_.empty()) {
                columns_ = std::move(fields);
                continue;
            }
            if (fields.size() != columns_.size()) {
                throw std::runtime_error(path_ + ":" + std::to_string(number) + ": " + std::to_string(fields.size()) +
                                         " fields where the header names " + std::to_string(columns_.size()));
            }
            rows_.push_back({number, std::move(fields)});
        }
    }

    const std::vector<tsv_row>& rows() const noexcept { return rows_; }

    // The index of a named column, for row.fields[...].
    std::size_t column(std::string_view name) const {
        for (std::size_t i = 0; i < columns_.size(); ++i) {
            if (columns_[i] == name) return i;
        }
        throw std::runtime_error(path_ + " has no column '" + std::string(name) + "'");
    }

private:
    static std::vector<std::string> split(std::string_view line) {
        std::vector<std::string> fields;
        std::size_t start = 0;
        while (true) {
            const std::size_t tab = line.find('\t', start);
            fields.push_back(unescape(line.substr(start, tab == std::string_view::npos ? tab : tab - start)));
            if (tab == std::string_view::npos) return fields;
            start = tab + 1;
        }
    }

    std::string path_;
    std::vector<std::string> columns_;
    std::vector<tsv_row> rows_;
};

}  // namespace wheelhouse::testing
