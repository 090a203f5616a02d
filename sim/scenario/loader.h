// Loading scenario files: strict YAML. An unknown key, a wrong type, a bad unit or an impossible
// value is a ScenarioError naming the file, line, column, key path and what was expected, with a
// did-you-mean for misspelt keys. Nothing is guessed and nothing is silently ignored.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/scenario/scenario.h"

namespace relaysim::sim {

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, int line, int column, std::string key, std::string problem);
  const std::string& file() const { return file_; }
  int line() const { return line_; }      // 1-based; 0 when unknown
  int column() const { return column_; }  // 1-based; 0 when unknown
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string problem_;
};

// Reads and validates a scenario file. Throws ScenarioError.
Scenario load_scenario(const std::string& path);
// The same for text in memory; `file` names it in errors.
Scenario parse_scenario(std::string_view text, const std::string& file);

}  // namespace relaysim::sim
