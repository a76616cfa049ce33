#include "wheelhouse/catalog/project_filter.hpp"

#include <boost/json.hpp>

namespace wheelhouse::catalog {

std::string visible_project_condition(std::string_view name_column, int parameter) {
    const std::string bound = "?" + std::to_string(parameter);
    // json_each turns the one bound array into rows, so any number of patterns is one parameter.
    return "(" + bound + " IS NULL OR EXISTS (SELECT 1 FROM json_each(" + bound + ") AS pattern WHERE " +
           std::string(name_column) + " GLOB pattern.value))";
}

void bind_project_filter(sqlite::statement& statement, int parameter, const project_filter& filter) {
    if (filter.shows_every_project()) {
        statement.bind_null(parameter);
        return;
    }
    boost::json::array patterns;
    for (const auto& pattern : filter.patterns) patterns.emplace_back(pattern);
    statement.bind_text(parameter, boost::json::serialize(patterns));
}

}  // namespace wheelhouse::catalog
