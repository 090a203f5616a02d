// The pieces every JSON API of the live shell shares (the webhook service's and the SMS
// gateway's): reading a request's JSON body strictly, the standard refusals, and how times and
// numbers are written and read.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "live/http_server.h"
#include "model/core/time.h"
#include "model/store/store_error.h"

namespace relaysim::live {

// The deepest JSON nesting a body may have (printing and freeing JSON recurse).
inline constexpr int kMaxJsonDepth = 64;

// JSON written one way (no spaces, keys in order; bad UTF-8 replaced), with a newline.
std::string dump_json(const nlohmann::json& j);
// An answer of `status` whose body is `body`.
Response json_response(int status, const nlohmann::json& body);

// Reads the body of `in` into `out`; or the refusal to answer with: 415 when it is not sent as
// application/json, 400 when it is not JSON, or is JSON the parser would read but change: a name
// given twice in one object (the parser keeps the last), an integer beyond 64 bits (read as a
// double, it loses digits), nesting deeper than kMaxJsonDepth.
std::optional<Response> read_json_body(const Incoming& in, nlohmann::json& out);
// A 400 naming the first field of the object `body` that is not one of `allowed`; nullopt when
// there is none.
std::optional<Response> only_fields(const nlohmann::json& body, std::initializer_list<std::string_view> allowed);
// Whether a Content-Type header names application/json (parameters such as charset aside).
bool is_json_media_type(std::string_view content_type);

// `text` with its %XX escapes decoded; nullopt when a % is not followed by two hex digits.
std::optional<std::string> percent_decoded(std::string_view text);

// A whole decimal number that fits in 64 bits, nothing around it; nullopt otherwise.
std::optional<std::uint64_t> whole_number(std::string_view text);

// 405 with the Allow header.
Response method_not_allowed(std::string_view allowed);
// 401 with the WWW-Authenticate header.
Response unauthorized(std::string_view reason);
// 503 with Retry-After: the store failed, and the request may be tried again.
Response store_failed(const StoreError& e);

// "2026-11-26T02:11:18.123Z": a live Time (Unix nanoseconds) as RFC 3339 UTC.
std::string format_utc(Time t);
// The other way: "YYYY-MM-DDTHH:MM:SS" with an optional fraction of up to nine digits, then "Z";
// nullopt for anything else (another offset, a date that does not exist, a year before 1970 or
// after 2261).
std::optional<Time> parse_utc(std::string_view text);

}  // namespace relaysim::live
