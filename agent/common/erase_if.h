// std::erase_if for associative containers, which C++17 lacks.
#pragma once

#include <iterator>

namespace gpuq {

/// Erases every element of `map` (any container whose erase returns the next
/// iterator) for which `pred` holds.
template <typename Map, typename Pred>
void EraseIf(Map* map, Pred pred) {
  for (auto it = map->begin(); it != map->end();) {
    it = pred(*it) ? map->erase(it) : std::next(it);
  }
}

}  // namespace gpuq
