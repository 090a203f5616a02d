// StoreError: how every relaysim store reports a failed call, with the kind of failure, so a
// caller can tell "try again later" (busy) from "no space" (full) from a broken disk (io).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "model/core/names.h"

namespace relaysim {

// Why a store call failed.
enum class StoreFailure : std::uint8_t {
  busy,   // locked by another connection; try again later
  full,   // no space left: the disk, or the database's size limit
  io,     // an I/O error, or the process dying in the middle of a write
  other,  // anything else (corruption, misuse): not worth retrying
};
inline constexpr auto kStoreFailureNames = names<StoreFailure>({
    {StoreFailure::busy, "busy"}, {StoreFailure::full, "full"}, {StoreFailure::io, "io"},
    {StoreFailure::other, "other"}});
constexpr std::string_view to_string(StoreFailure f) { return kStoreFailureNames[f]; }

class StoreError : public std::runtime_error {
 public:
  StoreError(StoreFailure failure, const std::string& what) : std::runtime_error(what), failure_(failure) {}
  StoreFailure failure() const { return failure_; }

 private:
  StoreFailure failure_;
};

}  // namespace relaysim
