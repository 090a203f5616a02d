// What every fuzz target of a live API checks of an answer, whatever the request: a status the
// API promises (never a 500), JSON that parses, and a reason in every 4xx and 5xx.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "live/http_server.h"

namespace relaysim::fuzzing {

inline void check_answer(const live::Response& r) {
  if (r.status < 200 || r.status >= 600 || r.status == 500) std::abort();
  if (r.content_type == "application/json") {
    const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    if (body.is_discarded()) std::abort();
    if (r.status >= 400 && !(body.is_object() && body.contains("error") && body["error"].is_string())) std::abort();
  }
}

}  // namespace relaysim::fuzzing
