// A hash for std::pair and std::tuple keys of integers and enums, so an
// unordered map can stand in for a sorted one the model updates per event
// (a tree of thousands costs a cache miss per level).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace gpuq {

struct TupleHash {
  template <typename... T>
  size_t operator()(const std::tuple<T...>& key) const {
    size_t seed = 0;
    std::apply([&seed](const auto&... field) { (Combine(&seed, field), ...); },
               key);
    return seed;
  }
  template <typename A, typename B>
  size_t operator()(const std::pair<A, B>& key) const {
    size_t seed = 0;
    Combine(&seed, key.first);
    Combine(&seed, key.second);
    return seed;
  }

 private:
  // boost::hash_combine's mixing: libstdc++ hashes an integer to itself.
  template <typename Field>
  static void Combine(size_t* seed, const Field& field) {
    static_assert(std::is_integral_v<Field> || std::is_enum_v<Field>);
    const auto value = static_cast<uint64_t>(field);
    *seed ^= std::hash<uint64_t>()(value) + 0x9e3779b97f4a7c15ull +
             (*seed << 6) + (*seed >> 2);
  }
};

}  // namespace gpuq
