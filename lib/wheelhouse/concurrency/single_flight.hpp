#pragma once
// What a single flight (one piece of work that many requests wait on) does when it lands.

#include <exception>
#include <vector>

namespace wheelhouse::concurrency {

// Calls every waiter with the same `value`. One that throws leaves the others answered;
// `report` hears what it threw (the caller logs it: lib/ has no logger).
template <typename Waiter, typename Value, typename Report>
void answer_each(std::vector<Waiter>& waiters, const Value& value, const Report& report) {
    for (auto& waiter : waiters) {
        try {
            waiter(value);
        } catch (const std::exception& failure) {
            report(failure);
        }
    }
}

}  // namespace wheelhouse::concurrency
