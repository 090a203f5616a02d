// `relaysim report DIR`: report.html and report.md from a run's --timeseries directory or a
// sweep's --out directory, with charts drawn by gnuplot (cli/report.cpp).
#pragma once

#include <string>

namespace relaysim::cli {

int report_command(const std::string& dir);
// `relaysim lifecycles DIR`: DIR/lifecycles.md, and each lifecycle of every system as
// DIR/lifecycles/NAME.dot and, drawn by Graphviz, NAME.svg — from the model's own tables.
int lifecycles_command(const std::string& dir);

}  // namespace relaysim::cli
