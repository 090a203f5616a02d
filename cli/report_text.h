// What `relaysim report` reads from a run's result.json, as text: the tables, the data of the
// latency CDF and the Graphviz graph of the pipeline. Nothing here touches a file or starts a
// program, so a fuzz target can feed it any JSON; a value of the wrong type throws
// nlohmann::json::exception (the report refuses the file), and a missing one reads as absent.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "sim/system.h"

namespace relaysim::cli {

// j[key], or null when `j` is no object holding `key`: a result.json edited by hand must not
// take the reader past what it holds (a missing key of a const json is undefined behaviour).
const nlohmann::json& field(const nlohmann::json& j, const char* key);
// A figure as a person reads it: 1234567 as "1,234,567"; a fraction with up to 3 digits.
std::string grouped(double v);
std::string html_escape(const std::string& s);
// A string gnuplot reads inside single quotes.
std::string gp_quote(const std::string& s);
// A name Graphviz reads inside double quotes.
std::string dot_quote(const std::string& s);

// The latency distribution of the whole and of each group (up to 12; none when there is one),
// from the JSON's `groups` (what the system's latency metrics measure): gnuplot data, one block
// per curve of "seconds percent" lines, and each curve's title.
struct LatencyCdf {
  std::string data;
  std::vector<std::string> titles;  // "all", then the groups'
  std::string by;                   // what the groups are: "endpoint group"
};
std::optional<LatencyCdf> latency_cdf(const nlohmann::json& result);

// What each group finished, and how fast, from the JSON's `groups`: an HTML and a Markdown table
// (nothing with fewer than two groups).
void group_tables(const nlohmann::json& result, std::string& html, std::string& md);

// The system's pipeline with the run's flow on each edge, as a Graphviz graph: the count, and the
// rate per second of virtual time ("" when the system declares no pipeline or there are no metrics).
std::string pipeline_dot(const sim::System& system, const nlohmann::json& result);

}  // namespace relaysim::cli
