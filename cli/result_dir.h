// A result directory (of a run's outputs, of a sweep): written over only when everything in it
// was written by the same command before, so a typo in a path never clobbers someone's files.
#pragma once

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace relaysim::cli {

// Makes `path` if it is missing; says what is wrong when it is a file or holds anything but
// `ours` (`who`: "run", "sweep", for the message).
std::optional<std::string> prepare_result_dir(const std::string& path, std::initializer_list<const char*> ours, const std::string& who);

// Says why `p` cannot be written as a file (`what`: "--json"), or nothing: checked before a long
// piece of work, so a mistyped path is not found only at its end.
std::optional<std::string> check_writable(const std::filesystem::path& p, const std::string& what);

// Writes `text` to `p` whole, as a new file that replaces `p` (a symbolic link there is replaced,
// never written through); says what went wrong.
std::optional<std::string> write_text(const std::filesystem::path& p, const std::string& text);

// The same for text too large to hold whole: `produce` hands it to the writer piece by piece (the
// writer says false once a write has failed, and later pieces are dropped).
using TextWriter = std::function<bool(std::string_view)>;
std::optional<std::string> write_pieces(const std::filesystem::path& p, const std::function<void(const TextWriter&)>& produce);

}  // namespace relaysim::cli
