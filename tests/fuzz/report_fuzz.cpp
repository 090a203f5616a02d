// libFuzzer target: the result.json `relaysim report` reads (cli/report_text.h). Whatever the
// bytes, reading them ends in text or in a json exception (the report then refuses the file
// with exit 2) and never crashes; the CDF's data has a curve for each title, and every table row
// has as many cells as its header. And every gnuplot script the report would make of the file's
// texts — each string in it as a chart's title, a lane, a sweep's metric and axis — is inert
// (gp_inert: nothing but the charts' own commands and quoted literals), and escaped HTML holds
// no tag of its own.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/report_text.h"
#include "sim/system.h"

namespace {

// Every string value of `j` (and every key), up to `most`.
void strings_of(const nlohmann::json& j, std::vector<std::string>& out, std::size_t most) {
  if (out.size() >= most) return;
  if (j.is_string()) {
    out.push_back(j.get<std::string>());
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      out.push_back(key);
      strings_of(value, out, most);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) strings_of(value, out, most);
  }
}

void inert(const relaysim::cli::GnuplotChart& chart) {
  if (!relaysim::cli::gp_inert(chart.script)) {
    std::fprintf(stderr, "report: a script gnuplot would run something in:\n%s\n", chart.script.c_str());
    std::abort();
  }
  for (const auto& [name, content] : chart.data) {
    // A plain name, of the characters file_stem leaves. A chart's name joins a prefix and an
    // index to a stem of up to 60 characters, so it is checked 60 characters at a time.
    const std::string stem = name.substr(0, name.rfind('.'));
    if (stem.empty()) std::abort();
    for (std::size_t at = 0; at < stem.size(); at += 60) {
      if (relaysim::cli::file_stem(stem.substr(at, 60)) != stem.substr(at, 60)) std::abort();
    }
  }
}

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
    // The texts of the file as every name a chart shows.
    std::vector<std::string> texts;
    strings_of(result, texts, 64);
    if (texts.empty()) texts.push_back("");
    using namespace relaysim::cli;
    std::vector<std::vector<std::string>> events;
    std::vector<SeriesCurve> curves;
    std::vector<SweepChartPoint> points;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string& t = texts[i];
      const std::string& u = texts[(i + 1) % texts.size()];
      events.push_back({std::to_string(i), i % 3 ? std::to_string(i + 2) : "", t, u, i % 2 ? u + " -> " + t : t, i % 2 ? "1" : "0"});
      curves.push_back({i + 2, t, i % 2 == 1});
      points.push_back({i % 4 ? std::to_string(i) : t, 1, 2, 1.5});
      inert(sweep_chart(i, t, i % 2 ? " (%)" : "", u, i % 2 == 0, points));
      const std::string escaped = html_escape(t);
      if (escaped.find('<') != std::string::npos || escaped.find('>') != std::string::npos) std::abort();
      if (md_escape(t).find('\n') != std::string::npos) std::abort();
      const std::string quoted = dot_quote(t);
      // A Graphviz literal: quoted, and every quote inside it escaped.
      for (std::size_t k = 1; k + 1 < quoted.size(); ++k) {
        if (quoted[k] == '\\') ++k;
        else if (quoted[k] == '"' || quoted[k] == '\n') std::abort();
      }
    }
    inert(panel_chart("panel-flow", texts[0], curves, {{0, 60}, {120, 3600}}, texts.size() % 2 == 0, texts.size() % 3 == 0));
    if (const auto lanes = lanes_chart(events, 100000, true)) inert(*lanes);
    LatencyCdf cdf;
    cdf.titles = texts;
    cdf.by = texts.back();
    inert(cdf_chart(cdf));
  } catch (const nlohmann::json::exception&) {
    // A value of the wrong type: the report refuses the file.
  }
  return 0;
}
