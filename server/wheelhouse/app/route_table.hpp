#pragma once
// Every route the server answers, in one table (route_table.cpp): the dispatcher finds routes,
// computes 404, 405 and Allow, checks tokens and picks the thread from it alone.

#include <span>

#include "wheelhouse/app/route.hpp"

namespace wheelhouse::app {

// Thread safety: constant data; any thread.
std::span<const route> route_table() noexcept;

}  // namespace wheelhouse::app
