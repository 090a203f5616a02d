// Ports: the only ways the model touches the outside world.
//
// The simulator (sim/) implements them in virtual time with seeded faults; the live shell (live/)
// implements them with Boost.Asio and Beast. Every asynchronous port promises to call its callback
// exactly once, never before the call that started it has returned to the shell's event loop
// unless documented otherwise, and to enforce the timeout it was given.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/core/function.h"
#include "model/core/time.h"

namespace relaysim {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
};

struct TimerId {
  std::uint64_t value = 0;  // 0 means "no timer"
  explicit operator bool() const { return value != 0; }
};

using TimerCallback = InplaceFunction<void(), 48>;

class Timers {
 public:
  virtual ~Timers() = default;
  // Runs `cb` at `at` (or at once, in order, if `at` is already past). Never runs it inline.
  virtual TimerId schedule_at(Time at, TimerCallback cb) = 0;
  // Cancels a pending timer; cancelling a fired or unknown timer does nothing.
  virtual void cancel(TimerId id) = 0;
};

// ---- HTTP delivery ---------------------------------------------------------------------------

// What went wrong below HTTP. `none` means a status line arrived.
enum class NetError : std::uint8_t { none, timeout, connect_error, dns_error };

struct HttpRequest {
  std::string_view url;
  std::string_view webhook_id;  // stable per request, sent as the `webhook-id` header
  std::string_view payload;     // JSON body
};

struct HttpResult {
  NetError error = NetError::none;
  int status = 0;                    // valid when error == none
  Duration retry_after{-1};          // parsed Retry-After header; negative when absent
};

using HttpCallback = InplaceFunction<void(const HttpResult&), 48>;

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // The request's views are valid only during the call.
  virtual void send(const HttpRequest& request, Duration timeout, HttpCallback done) = 0;
};

// ---- ServiceB: the external directory of destination URLs -----------------------------------

enum class LookupStatus : std::uint8_t { found, not_found, error };

struct LookupResult {
  LookupStatus status = LookupStatus::error;
  std::string_view url;            // valid during the callback only
  std::uint64_t version = 0;       // ServiceB's version of this cxid's URL
};

using LookupCallback = InplaceFunction<void(const LookupResult&), 48>;

class UrlDirectory {
 public:
  virtual ~UrlDirectory() = default;
  // `error` covers 5xx, timeouts and refused connections: ServiceB could not answer.
  virtual void lookup(std::string_view cxid, Duration timeout, LookupCallback done) = 0;
};

}  // namespace relaysim
