#include "cli/result_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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

std::optional<std::string> check_writable(const fs::path& p, const std::string& what) {
  std::error_code ec;
  if (p.empty()) return what + " needs a path";
  if (fs::is_directory(p, ec)) return what + " " + p.string() + " is a directory; give a file name";
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(parent, ec)) return what + " " + p.string() + ": there is no directory " + parent.string();
  // write_text makes a new file in the directory and renames it over `p`.
  if (::access(parent.c_str(), W_OK) != 0) return what + " " + p.string() + ": cannot write in " + parent.string() + ": " + std::strerror(errno);
  return std::nullopt;
}

std::optional<std::string> write_text(const fs::path& p, const std::string& text) {
  return write_pieces(p, [&text](const TextWriter& write) { write(text); });
}

std::optional<std::string> write_pieces(const fs::path& p, const std::function<void(const TextWriter&)>& produce) {
  // A new file beside `p`, renamed over it once whole: rename(2) replaces a symbolic link at `p`
  // instead of following it, and a reader never sees half a file.
  std::string temp = (p.parent_path().empty() ? fs::path(".") : p.parent_path()) / ("." + p.filename().string() + ".XXXXXX");
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return "cannot write " + p.string() + ": " + std::strerror(errno);
  std::optional<std::string> failed;
  const TextWriter write = [&](std::string_view piece) {
    std::size_t done = 0;
    while (!failed && done < piece.size()) {
      const ssize_t n = ::write(fd, piece.data() + done, piece.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed = std::strerror(errno);
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    return !failed;
  };
  produce(write);
  if (failed) {
    ::close(fd);
    ::unlink(temp.c_str());
    return "cannot write " + p.string() + ": " + *failed;
  }
  // mkstemp makes the file 0600; an output is as readable as any file the user makes.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0 || ::rename(temp.c_str(), p.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    return "cannot write " + p.string() + ": " + why;
  }
  return std::nullopt;
}

}  // namespace relaysim::cli
