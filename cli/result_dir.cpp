#include "cli/result_dir.h"

#include <fstream>
#include <system_error>

namespace relaysim::cli {

namespace fs = std::filesystem;

std::optional<std::string> prepare_result_dir(const std::string& path, std::initializer_list<const char*> ours, const std::string& who) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec)) return path + " is a file; give a directory";
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      bool known = false;
      for (const char* f : ours) known = known || e.path().filename() == f;
      if (!known) return path + " holds " + e.path().filename().string() + ", which no " + who + " wrote; give a new or empty directory";
    }
  }
  fs::create_directories(path, ec);
  if (ec) return "cannot make the directory " + path + ": " + ec.message();
  return std::nullopt;
}

std::optional<std::string> write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::out | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return "cannot write " + p.string();
  return std::nullopt;
}

}  // namespace relaysim::cli
