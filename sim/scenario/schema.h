// Schema: each scenario key declared once — its name, what kind of value it takes, what it means
// and its default — and everything else derived from that declaration: the strict reader, the
// writer (yaml-cpp's emitter, so quoting is never done by hand) and the reference tables of
// docs/scenario-format.md (`relaysim reference`), which therefore cannot drift from the code.
//
// A Schema<T> reads a YAML mapping into a T. Its keys are bound to T's members through Codecs,
// each of which knows how to read, write and describe one kind of value (a duration, a fraction,
// a nested mapping with its own schema, a list of them...). Defaults are T's own member defaults:
// the writer leaves out what equals the default, and the docs print the default as the writer
// would write it. Cross-key rules (p99 not below p50; `to` after `from`) are checks run after the
// keys, with located errors like everything else.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "model/core/assert.h"
#include "model/core/bounds.h"
#include "model/core/names.h"
#include "sim/scenario/yaml_reader.h"

namespace relaysim::sim {

// One reference table of the docs: the keys of the mapping at `path`.
struct DocTable {
  struct Row {
    std::string key;
    std::string kind;
    std::string meaning;
    std::string default_text;
  };
  std::string path;  // "webhook.platform", "webhook.world.endpoints[]"
  std::string intro;
  std::vector<Row> rows;
};
std::string render_markdown(const std::vector<DocTable>& tables);

// How one kind of value is read, written and described.
template <class V>
struct Codec {
  std::string kind;  // for the docs: "duration", "whole number, 1 to 1024"
  // Reads the node into `value`, which holds the default (or what is already known) on entry.
  std::function<void(const Reader&, const YAML::Node&, const std::string& path, V& value)> read;
  // Writes `value`; `defaults` is what a reader would assume without it.
  std::function<void(YAML::Emitter&, const V& value, const V& defaults)> emit;
  // Nested tables, for values that are mappings (or lists of them).
  std::function<void(std::vector<DocTable>&, const std::string& path, const V& defaults)> document;
};

// The text the emitter writes for `value` alone: the docs' "default" column.
template <class V>
std::string emitted_text(const Codec<V>& c, const V& value) {
  YAML::Emitter e;
  e << YAML::Flow;
  c.emit(e, value, value);
  return e.c_str();
}

enum class Style : std::uint8_t { block, flow };

struct KeyOptions {
  bool required = false;     // must be given; always written
  bool always_write = false; // written even when equal to the default (another key's default depends on it)
  std::string default_text;  // instead of the default as written: "one per endpoint", "none"
};
namespace opt {
inline KeyOptions required() { return KeyOptions{true, true, {}}; }
// Written even when it equals the default; `shown` replaces the default in the docs.
inline KeyOptions always(std::string shown = {}) { return KeyOptions{false, true, std::move(shown)}; }
// The docs show `text` as the default.
inline KeyOptions shown(std::string text) { return KeyOptions{false, false, std::move(text)}; }
}  // namespace opt

template <class T>
class Schema {
 public:
  struct Key {
    std::string name;
    std::string kind;
    std::string meaning;
    std::string default_text;
    bool required = false;
    bool always_write = false;
    std::function<void(const Reader&, const YAML::Node&, const std::string&, T&)> read;
    std::function<bool(const T& value, const T& defaults)> differs;
    std::function<void(YAML::Emitter&, const T& value, const T& defaults)> emit;
    std::function<void(std::vector<DocTable>&, const std::string& path, const T& defaults)> document;
    // The docs' default column, given the enclosing mapping's defaults (when default_text is empty).
    std::function<std::string(const T& defaults)> default_of;
  };
  using Check = std::function<void(const Reader&, const Map&, T&)>;

  explicit Schema(Style style = Style::block, std::string intro = {}) : style_(style), intro_(std::move(intro)) {}

  template <class V>
  Schema& key(std::string name, V T::*member, Codec<V> codec, std::string meaning, KeyOptions opt = {}) {
    RELAYSIM_ASSERT(!name.empty(), "a key has a name");
    RELAYSIM_ASSERT(codec.read && codec.emit, "a key's codec reads and writes it");
    Key k;
    k.name = std::move(name);
    k.kind = codec.kind;
    k.meaning = std::move(meaning);
    k.required = opt.required;
    k.always_write = opt.required || opt.always_write;
    k.default_text = opt.default_text;
    k.read = [member, read = codec.read](const Reader& r, const YAML::Node& n, const std::string& p, T& out) {
      read(r, n, p, out.*member);
    };
    k.differs = [member](const T& v, const T& d) { return !(v.*member == d.*member); };
    k.emit = [member, emit = codec.emit](YAML::Emitter& e, const T& v, const T& d) { emit(e, v.*member, d.*member); };
    if (codec.document) {
      k.document = [member, doc = codec.document](std::vector<DocTable>& out, const std::string& p, const T& d) {
        doc(out, p, d.*member);
      };
    }
    if (codec.document && k.default_text.empty()) k.default_text = "below";
    k.default_of = [member, codec](const T& d) { return "`" + emitted_text(codec, d.*member) + "`"; };
    keys_.push_back(std::move(k));
    return *this;
  }

  // The keys of `sub`, at this level, read into and written from `member`.
  template <class S>
  Schema& include(S T::*member, const Schema<S>& sub) {
    for (const typename Schema<S>::Key& s : sub.keys()) {
      Key k;
      k.name = s.name;
      k.kind = s.kind;
      k.meaning = s.meaning;
      k.default_text = s.default_text;
      k.required = s.required;
      k.always_write = s.always_write;
      k.read = [member, read = s.read](const Reader& r, const YAML::Node& n, const std::string& p, T& out) {
        read(r, n, p, out.*member);
      };
      k.differs = [member, differs = s.differs](const T& v, const T& d) { return differs(v.*member, d.*member); };
      k.emit = [member, emit = s.emit](YAML::Emitter& e, const T& v, const T& d) { emit(e, v.*member, d.*member); };
      if (s.document) {
        k.document = [member, doc = s.document](std::vector<DocTable>& out, const std::string& p, const T& d) {
          doc(out, p, d.*member);
        };
      }
      if (s.default_of) {
        k.default_of = [member, of = s.default_of](const T& d) { return of(d.*member); };
      }
      keys_.push_back(std::move(k));
    }
    for (const typename Schema<S>::Check& c : sub.checks()) {
      checks_.push_back([member, c](const Reader& r, const Map& m, T& out) { c(r, m, out.*member); });
    }
    return *this;
  }

  // A nested mapping whose keys are members of T itself: `url_cache: {ttl, max_entries}` filling
  // a flat config. Written when any of its keys differs from the default.
  Schema& section(std::string name, const Schema<T>& sub, std::string meaning) {
    Key k;
    k.name = std::move(name);
    k.kind = "mapping, below";
    k.meaning = std::move(meaning);
    k.default_text = "below";
    k.read = [&sub](const Reader& r, const YAML::Node& n, const std::string& p, T& out) { sub.read(r, n, p, out); };
    k.differs = [&sub](const T& v, const T& d) { return sub.writes_anything(v, d); };
    k.emit = [&sub](YAML::Emitter& e, const T& v, const T& d) { sub.emit(e, v, d); };
    k.document = [&sub](std::vector<DocTable>& out, const std::string& p, const T& d) { sub.document(out, p, d); };
    keys_.push_back(std::move(k));
    return *this;
  }

  // A key with its own reading and writing (a value whose shape no Codec describes).
  Schema& add(Key k) {
    RELAYSIM_ASSERT(k.read && k.differs && k.emit, "a key says how it is read and written");
    keys_.push_back(std::move(k));
    return *this;
  }

  // A key's former name, refused with the name to write instead: a file written for an older
  // relaysim is told what changed rather than that the key is unknown.
  Schema& renamed(std::string former, std::string now) {
    renamed_.emplace_back(std::move(former), std::move(now));
    return *this;
  }

  // Runs after every key has been read: rules that involve several keys.
  Schema& check(Check c) {
    RELAYSIM_ASSERT(static_cast<bool>(c), "a check has a rule");
    checks_.push_back(std::move(c));
    return *this;
  }

  // The key declared last, to adjust what its declaration could not say.
  Key& last() {
    RELAYSIM_ASSERT(!keys_.empty(), "a key is declared before it is adjusted");
    return keys_.back();
  }
  const std::vector<Key>& keys() const { return keys_; }
  const std::vector<Check>& checks() const { return checks_; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Key& k : keys_) out.push_back(k.name);
    return out;
  }

  // Reads the mapping `n` into `out`, which holds the defaults on entry.
  void read(const Reader& r, const YAML::Node& n, const std::string& path, T& out) const {
    const Map m(r, n, path, names());
    for (const auto& [former, now] : renamed_) {
      if (m[former].IsDefined()) r.fail(m[former], m.child(former), "is now called '" + now + "'");
    }
    m.check_keys();
    for (const Key& k : keys_) {
      if (k.required) {
        k.read(r, m.required(k.name), m.child(k.name), out);
      } else if (m.has(k.name)) {
        k.read(r, m[k.name], m.child(k.name), out);
      }
    }
    for (const Check& c : checks_) c(r, m, out);
  }

  // Whether any key differs from its default (keys always written do not count).
  bool writes_anything(const T& v, const T& defaults) const {
    for (const Key& k : keys_) {
      if (k.differs(v, defaults)) return true;
    }
    return false;
  }

  // Writes a mapping of the keys that differ from `defaults` (and those always written).
  void emit(YAML::Emitter& e, const T& v, const T& defaults) const {
    e << (style_ == Style::flow ? YAML::Flow : YAML::Block) << YAML::BeginMap;
    for (const Key& k : keys_) {
      if (!k.always_write && !k.differs(v, defaults)) continue;
      e << YAML::Key << k.name << YAML::Value;
      k.emit(e, v, defaults);
    }
    e << YAML::EndMap;
  }

  // This mapping's table, then the tables of the mappings nested in it.
  void document(std::vector<DocTable>& out, const std::string& path, const T& defaults) const {
    DocTable t{path, intro_, {}};
    for (const Key& k : keys_) {
      const std::string def = k.required                ? "(required)"
                              : !k.default_text.empty() ? k.default_text
                              : k.default_of            ? k.default_of(defaults)
                                                        : "";
      t.rows.push_back({k.name, k.kind, k.meaning, def});
    }
    out.push_back(std::move(t));
    for (const Key& k : keys_) {
      if (k.document) k.document(out, path.empty() ? k.name : path + "." + k.name, defaults);
    }
  }

 private:
  Style style_;
  std::string intro_;
  std::vector<Key> keys_;
  std::vector<Check> checks_;
  std::vector<std::pair<std::string, std::string>> renamed_;  // former name, name now
};

// ---- Codecs -----------------------------------------------------------------------------------

Codec<Duration> duration_codec();
// A moment of the run, written as a duration since its start; must come before the run's end.
Codec<Time> time_codec();
Codec<double> rate_codec();  // per second
Codec<double> fraction_codec();
Codec<double> number_codec(double lo, double hi);
Codec<bool> flag_codec();
Codec<std::string> text_codec();
// Text that says something: not empty, not only spaces.
Codec<std::string> name_codec();

// The same, for values that must lie in `b` (model/core/bounds.h: declared beside the model's
// field, which its validate() reads too): a value outside is refused where the file writes it.
Codec<Duration> duration_codec(const Bounds<Duration>& b);
Codec<double> rate_codec(const Bounds<double>& b);
Codec<double> fraction_codec(const Bounds<double>& b);
Codec<double> number_codec(const Bounds<double>& b);

template <class I>
Codec<I> integer_codec(I lo, I hi) {
  RELAYSIM_ASSERT(lo <= hi, "a range's low end is not above its high end");
  return {"whole number, " + std::to_string(lo) + " to " + std::to_string(hi),
          [lo, hi](const Reader& r, const YAML::Node& n, const std::string& p, I& v) {
            v = static_cast<I>(r.integer(n, p, static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi)));
          },
          [](YAML::Emitter& e, const I& v, const I&) { e << std::to_string(v); },
          {}};
}

template <class I>
Codec<I> integer_codec(const Bounds<I>& b) {
  return integer_codec<I>(b.lo_open ? static_cast<I>(b.lo + 1) : b.lo, b.hi);
}

template <class E>
Codec<E> choice_codec(std::vector<std::pair<std::string, E>> options) {
  RELAYSIM_ASSERT(!options.empty(), "a choice has options");
  std::string kind;
  for (const auto& o : options) kind += (kind.empty() ? "" : " | ") + ("`" + o.first + "`");
  return {kind,
          [options](const Reader& r, const YAML::Node& n, const std::string& p, E& v) { v = r.choice(n, p, options); },
          [options](YAML::Emitter& e, const E& v, const E&) {
            for (const auto& o : options) {
              if (o.second == v) {
                e << o.first;
                return;
              }
            }
            e << "?";
          },
          {}};
}

// The choice of E's enumerators by their names (model/core/names.h): all of them, or only
// `only`, in the order given.
template <class E, std::size_t N>
Codec<E> choice_codec(const Names<E, N>& names, std::initializer_list<E> only = {}) {
  std::vector<std::pair<std::string, E>> options;
  if (only.size() == 0) {
    for (int i = 0; i < names.count; ++i) options.emplace_back(names[static_cast<E>(i)], static_cast<E>(i));
  } else {
    for (const E e : only) options.emplace_back(names[e], e);
  }
  return choice_codec(std::move(options));
}

// A nested mapping read with its own schema.
template <class S>
Codec<S> map_codec(const Schema<S>& schema, std::string kind = "mapping, below") {
  return {std::move(kind),
          [&schema](const Reader& r, const YAML::Node& n, const std::string& p, S& v) { schema.read(r, n, p, v); },
          [&schema](YAML::Emitter& e, const S& v, const S& d) { schema.emit(e, v, d); },
          [&schema](std::vector<DocTable>& out, const std::string& p, const S& d) { schema.document(out, p, d); }};
}

// A list of values; each item of a list of mappings starts from S{}.
template <class V>
Codec<std::vector<V>> list_codec(Codec<V> item, std::string kind = {}) {
  if (kind.empty()) kind = "list of " + item.kind;
  return {std::move(kind),
          [item](const Reader& r, const YAML::Node& n, const std::string& p, std::vector<V>& v) {
            v.clear();
            each(r, n, p, [&](const YAML::Node& x, const std::string& xp) {
              V one{};
              item.read(r, x, xp, one);
              v.push_back(std::move(one));
            });
          },
          [item](YAML::Emitter& e, const std::vector<V>& v, const std::vector<V>&) {
            e << YAML::BeginSeq;
            for (const V& x : v) item.emit(e, x, V{});
            e << YAML::EndSeq;
          },
          item.document ? std::function<void(std::vector<DocTable>&, const std::string&, const std::vector<V>&)>(
                              [item](std::vector<DocTable>& out, const std::string& p, const std::vector<V>&) {
                                item.document(out, p + "[]", V{});
                              })
                        : nullptr};
}

// ---- formatting -------------------------------------------------------------------------------

// The shortest text that reads back as the same double.
std::string write_number(double v);

}  // namespace relaysim::sim
