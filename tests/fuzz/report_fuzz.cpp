// libFuzzer target: the result.json `relaysim report` reads (cli/report_text.h). Whatever the
// bytes, reading them ends in text or in a json exception (the report then refuses the file
// with exit 2) and never crashes; the CDF's data has a curve for each title, and every table row
// has as many cells as its header.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/report_text.h"
#include "sim/system.h"

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using relaysim::cli::LatencyCdf;
  const nlohmann::json result = nlohmann::json::parse(data, data + size, nullptr, false);
  if (result.is_discarded()) return 0;
  try {
    if (const std::optional<LatencyCdf> cdf = relaysim::cli::latency_cdf(result)) {
      if (cdf->titles.empty() || count(cdf->data, "\n\n") != cdf->titles.size()) {
        std::fprintf(stderr, "report: %zu CDF titles for %zu curves\n", cdf->titles.size(), count(cdf->data, "\n\n"));
        std::abort();
      }
    }
    std::string html, md;
    relaysim::cli::group_tables(result, html, md);
    if (count(html, "<table>") != count(html, "</table>")) std::abort();
    for (const relaysim::sim::System* s : relaysim::sim::systems()) {
      const std::string dot = relaysim::cli::pipeline_dot(*s, result);
      if (!dot.empty() && dot.rfind("digraph pipeline {", 0) != 0) std::abort();
    }
  } catch (const nlohmann::json::exception&) {
    // A value of the wrong type: the report refuses the file.
  }
  return 0;
}
