#include "wheelhouse/ingest/zip_range_source.hpp"

#include <algorithm>
#include <cstring>

namespace wheelhouse::ingest {
namespace {

zip_int64_t range_source_callback(void* user_data, void* data, zip_uint64_t length, zip_source_cmd_t command) {
    auto& state = *static_cast<range_source_state*>(user_data);
    switch (command) {
        case ZIP_SOURCE_OPEN:
            state.position = 0;
            return 0;
        case ZIP_SOURCE_READ: {
            const std::uint64_t size = state.cache->size();
            if (state.position >= size) return 0;
            const std::uint64_t count = std::min<std::uint64_t>(length, size - state.position);
            auto bytes = state.cache->read(state.position, count);
            if (!bytes) {
                state.read_failure = bytes.error();
                zip_error_set(&state.error, ZIP_ER_READ, 0);
                return -1;
            }
            std::memcpy(data, bytes->data(), bytes->size());
            state.position += bytes->size();
            return static_cast<zip_int64_t>(bytes->size());
        }
        case ZIP_SOURCE_CLOSE:
            return 0;
        case ZIP_SOURCE_STAT: {
            auto* stat = static_cast<zip_stat_t*>(data);
            zip_stat_init(stat);
            stat->size = state.cache->size();
            stat->valid |= ZIP_STAT_SIZE;
            return sizeof(zip_stat_t);
        }
        case ZIP_SOURCE_ERROR:
            return zip_error_to_data(&state.error, data, length);
        case ZIP_SOURCE_FREE:
            zip_error_fini(&state.error);
            return 0;
        case ZIP_SOURCE_SEEK: {
            const zip_int64_t target = zip_source_seek_compute_offset(
                state.position, state.cache->size(), data, length, &state.error);
            if (target < 0) return -1;
            state.position = static_cast<std::uint64_t>(target);
            return 0;
        }
        case ZIP_SOURCE_TELL:
            return static_cast<zip_int64_t>(state.position);
        case ZIP_SOURCE_SUPPORTS:
            return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                                  ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
                                                  ZIP_SOURCE_SUPPORTS, -1);
        default:
            zip_error_set(&state.error, ZIP_ER_OPNOTSUPP, 0);
            return -1;
    }
}

}  // namespace

zip_source_t* make_range_source(range_source_state& state, zip_error_t* failure) {
    zip_error_init(&state.error);
    return zip_source_function_create(range_source_callback, &state, failure);
}

}  // namespace wheelhouse::ingest
