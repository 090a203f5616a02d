#include "model/webhook/types.h"

#include <charconv>

#include "model/core/short_text.h"

namespace relaysim::webhook {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::pending: return "pending";
    case Status::blocked: return "blocked_on_dependency";
    case Status::in_flight: return "in_flight";
    case Status::delivered: return "delivered";
    case Status::failed: return "failed";
    case Status::dead_lettered: return "dead_lettered";
  }
  return "?";
}

std::string_view to_string(Reason r) {
  switch (r) {
    case Reason::none: return "none";
    case Reason::ok: return "ok";
    case Reason::client_error: return "client_error";
    case Reason::gone: return "gone";
    case Reason::rejected: return "rejected";
    case Reason::forbidden_address: return "forbidden_address";
    case Reason::bad_url: return "bad_url";
    case Reason::no_url: return "no_url";
    case Reason::deadline: return "deadline";
  }
  return "?";
}

std::string webhook_id_for(RequestId id) {
  ShortText<32> header;
  header << "msg_" << id;
  return std::string(header.view());
}

RequestId request_id_from_webhook_id(std::string_view header) {
  if (header.substr(0, 4) != "msg_") return 0;
  RequestId id = 0;
  const char* first = header.data() + 4;
  const char* last = header.data() + header.size();
  auto [end, ec] = std::from_chars(first, last, id);
  if (ec != std::errc{} || end != last) return 0;
  return id;
}

}  // namespace relaysim::webhook
