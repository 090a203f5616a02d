// `relaysim report DIR`: report.html and report.md from a run's --timeseries directory or a
// sweep's --out directory, with charts drawn by gnuplot (cli/report.cpp).
#pragma once

#include <string>

namespace relaysim::cli {

int report_command(const std::string& dir);

}  // namespace relaysim::cli
