#include "model/webhook/types.h"

#include <charconv>

#include "model/core/assert.h"
#include "model/core/short_text.h"

namespace relaysim::webhook {

std::string webhook_id_for(RequestId id) {
  RELAYSIM_ASSERT(id != 0, "request ids count from 1 (0 is no request of ours)");
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
