#include "sim/world/arrivals.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "model/core/assert.h"
#include "model/core/text.h"

namespace relaysim::sim {

double ArrivalSpec::expected_calls() const {
  if (burst > 0) return static_cast<double>(burst);
  if (shaped()) return calls_before(to);
  return rate_per_s * to_seconds(to - from);
}

double ArrivalSpec::expected_calls(Time end) const {
  if (burst > 0) return from < end ? static_cast<double>(burst) : 0.0;
  if (shaped()) return calls_before(end);
  return rate_per_s * to_seconds(std::max(Duration{}, std::min(to, end) - from));
}

namespace {

// A shaped segment's rate and Lambda as functions of u, the seconds since its `from`:
//   r(u) = (a + b u) (1 + A cos(w (u + c))),  a = rate, b = the ramp's slope, A = swing,
//   w = 2 pi / period, c = from - peak_at (seconds);
//   Lambda(u) = a u + b u^2 / 2 + A [g(u) - g(0)],  g(s) = (a + b s) sin(w (s + c)) / w + b cos(w (s + c)) / w^2
// (g' = (a + b s) cos(w (s + c)), by parts). Lambda never falls, as r >= 0 when A <= 1.
struct Shape {
  double a = 0, b = 0, swing = 0, w = 0, c = 0, span = 0;

  explicit Shape(const ArrivalSpec& s) : a(s.rate_per_s), swing(s.swing), span(to_seconds(s.to - s.from)) {
    RELAYSIM_ASSERT(span > 0, "a rate segment ends after it starts");
    if (s.ramps()) b = (s.ramp_to_per_s - s.rate_per_s) / span;
    if (swing > 0) {
      w = 2 * std::numbers::pi / to_seconds(s.period);
      // Reduced to one period, so that the phase stays small and exact for any `from`.
      c = std::fmod(to_seconds(s.from.time_since_epoch()) - to_seconds(s.peak_at), to_seconds(s.period));
    }
  }
  double rate(double u) const {
    const double linear = std::max(0.0, a + b * u);
    return swing > 0 ? linear * (1 + swing * std::cos(w * (u + c))) : linear;
  }
  double g(double s) const { return (a + b * s) * std::sin(w * (s + c)) / w + b * std::cos(w * (s + c)) / (w * w); }
  double lambda(double u) const {
    const double plain = a * u + b * u * u / 2;
    return swing > 0 ? plain + swing * (g(u) - g(0)) : plain;
  }
};

}  // namespace

double ArrivalSpec::rate_at(Time t) const {
  if (burst > 0 || t < from || t >= to) return 0.0;
  if (!shaped()) return rate_per_s;
  return Shape(*this).rate(to_seconds(t - from));
}

double ArrivalSpec::max_rate_per_s() const {
  if (burst > 0) return 0.0;
  return std::max(rate_per_s, ramps() ? ramp_to_per_s : 0.0) * (1 + swing);
}

double ArrivalSpec::calls_before(Time t) const {
  RELAYSIM_ASSERT(burst == 0, "a burst has no rate to integrate");
  if (t <= from) return 0.0;
  const Shape shape(*this);
  return shape.lambda(std::min(to_seconds(t - from), shape.span));
}

Time ArrivalSpec::when_calls_reach(double calls, Time hint) const {
  RELAYSIM_ASSERT(burst == 0 && shaped(), "a shaped rate segment");
  const Shape shape(*this);
  if (!(calls < shape.lambda(shape.span))) return kTimeNever;
  // Newton's method on Lambda(u) = calls, kept inside a bracket [lo, hi] that always holds the
  // root, and bisecting where Newton would leave it (near a trough, where the rate is ~0).
  double lo = std::clamp(to_seconds(hint - from), 0.0, shape.span), hi = shape.span;
  if (shape.lambda(lo) >= calls) return hint;
  const double r0 = shape.rate(lo);
  double u = r0 > 0 ? std::min(hi, lo + (calls - shape.lambda(lo)) / r0) : (lo + hi) / 2;
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    const double f = shape.lambda(u) - calls;
    if (f >= 0) hi = u; else lo = u;
    const double r = shape.rate(u);
    double next = r > 0 ? u - f / r : lo;
    if (!(next > lo && next < hi)) next = lo + (hi - lo) / 2;
    if (std::abs(next - u) < 1e-10) {
      u = next;
      break;
    }
    u = next;
  }
  // Rounded up to the clock's nanosecond: the call comes when Lambda has reached `calls`.
  const double ns = std::ceil(u * 1e9);
  return from + Duration{static_cast<std::int64_t>(std::min(ns, static_cast<double>(to_ns(to - from))))};
}

std::vector<Time> ArrivalSpec::busiest_moments() const {
  std::vector<Time> out{from};
  if (!shaped()) return out;
  out.push_back(to - Duration{1});
  if (swing > 0) {
    // The cycle's peaks within [from, to): at most the first and last thousand of them (a linear
    // ramp times the cycle is highest near one of its ends' peaks).
    constexpr std::int64_t kMost = 1000;
    const std::int64_t p = period.count();
    const auto floor_div = [p](std::int64_t x) { return x / p - (x % p < 0 ? 1 : 0); };
    const std::int64_t first = -floor_div(peak_at.count() - to_ns(from.time_since_epoch()));  // the first peak >= from
    const std::int64_t last = floor_div(to_ns(to.time_since_epoch()) - 1 - peak_at.count());  // the last < to
    for (std::int64_t k = first; k <= last; ++k) {
      if (k - first >= kMost && last - k >= kMost) k = last - kMost;
      out.push_back(Time{} + peak_at + Duration{k * p});
    }
  }
  return out;
}

double ArrivalSpec::low_rate_per_s() const {
  RELAYSIM_ASSERT(high_share < 1, "high spells leave time for low ones");
  return std::max(0.0, rate_per_s * (1.0 - peak * high_share) / (1.0 - high_share));
}

Duration ArrivalSpec::low_spell() const {
  const double ns = static_cast<double>(spell.count()) * (1.0 - high_share) / high_share;
  RELAYSIM_ASSERT(ns > 0 && ns <= static_cast<double>(kLongestDuration.count()), "a low spell the reader let through fits");
  return Duration{static_cast<std::int64_t>(ns)};
}

double ArrivalSpec::scv() const {
  switch (arrival) {
    case Arrival::poisson: return 1.0;
    case Arrival::constant: return 0.0;
    case Arrival::bursty: break;
  }
  // IDC(inf) = 1 + 2 (l1 - l2)^2 r1 r2 / ((r1 + r2)^2 (l1 r2 + l2 r1)), with r1, r2 the rates of
  // leaving the high and the low state (Fischer and Meier-Hellstern, "The MMPP cookbook", 1993).
  const double l1 = high_rate_per_s(), l2 = low_rate_per_s();
  const double r1 = 1.0 / to_seconds(spell), r2 = 1.0 / to_seconds(low_spell());
  const double d = l1 - l2;
  return 1.0 + 2.0 * d * d * r1 * r2 / ((r1 + r2) * (r1 + r2) * (l1 * r2 + l2 * r1));
}

PeakLoad peak_load(std::span<const WeightedArrivals> segments) {
  // Flat segments change the total rate only where one starts, so the busiest moment is one of
  // those, or a shaped segment's busiest moment.
  PeakLoad peak;
  for (const WeightedArrivals& at : segments) {
    RELAYSIM_ASSERT(at.arrivals != nullptr && at.weight >= 0, "a segment with the work each of its calls brings");
    if (at.arrivals->burst != 0 || at.arrivals->max_rate_per_s() <= 0) continue;
    for (const Time t : at.arrivals->busiest_moments()) {
      double rate = 0, weighted_scv = 0;
      bool bursty = false;
      for (const WeightedArrivals& w : segments) {
        const ArrivalSpec& a = *w.arrivals;
        const double r = a.rate_at(t);
        if (r <= 0) continue;
        rate += r * w.weight;
        weighted_scv += r * w.weight * a.scv();
        bursty = bursty || a.arrival == Arrival::bursty;
      }
      if (rate > peak.rate_per_s) peak = PeakLoad{rate, weighted_scv / rate, bursty};
    }
  }
  return peak;
}

namespace {

// A time key of a load segment: `from` and `to` belong to a rate, `at` to a burst (it lands in
// `from`; a burst has no `to`). `within_run`: the time must lie within the run.
Schema<ArrivalSpec>::Key moment(std::string name, std::string meaning, std::string def, Time ArrivalSpec::*member, bool burst,
                                bool within_run) {
  Schema<ArrivalSpec>::Key k;
  k.name = std::move(name);
  k.kind = "time";
  k.meaning = std::move(meaning);
  k.default_text = std::move(def);
  k.read = [member, within_run](const Reader& r, const YAML::Node& n, const std::string& p, ArrivalSpec& a) {
    a.*member = within_run ? r.time(n, p) : Time{} + r.duration(n, p);
  };
  k.differs = [burst](const ArrivalSpec& a, const ArrivalSpec&) { return (a.burst > 0) == burst; };
  k.emit = [member](YAML::Emitter& e, const ArrivalSpec& a, const ArrivalSpec&) {
    e << write_duration((a.*member).time_since_epoch());
  };
  return k;
}

// The rules between a bursty segment's keys.
void check_bursty(const Reader& r, const Map& m, const ArrivalSpec& a) {
  if (a.high_share <= 0 || a.high_share >= 1) {
    r.fail(m.has("high_share") ? m["high_share"] : m.node(), m.child("high_share"), "must be above 0% and below 100%");
  }
  if (!ArrivalSpec::kSpell.holds(a.spell)) {
    r.fail(m.has("spell") ? m["spell"] : m.node(), m.child("spell"), must_text(ArrivalSpec::kSpell));
  }
  // The low spell's mean length, in double first: in nanoseconds it may not fit.
  const double low_ns = static_cast<double>(a.spell.count()) * (1.0 - a.high_share) / a.high_share;
  if (!(low_ns <= static_cast<double>(kLongestDuration.count()))) {
    r.fail(m.has("high_share") ? m["high_share"] : m.node(), m.child("high_share"),
           "makes the low spells (spell x (1 - high_share) / high_share) longer than " + write_duration(kLongestDuration) +
               "; raise high_share or shorten spell");
  }
  if (a.peak * a.high_share > 1.0 + 1e-12) {
    r.fail(m.has("peak") ? m["peak"] : m.node(), m.child("peak"),
           "peak x high_share must be at most 1, or the rate between high spells would be negative (here " +
               fmt("%g x %g%%", a.peak, 100 * a.high_share) + ")");
  }
}

// The rules between a segment's keys: a burst or a rate, and what belongs to each.
void check_arrival(const Reader& r, const Map& m, ArrivalSpec& a) {
  if (m.has("burst")) {
    if (m.has("rate")) r.fail(m["rate"], m.child("rate"), "a burst has no rate: it is `burst: N` at `at:`");
    if (m.has("from") || m.has("to")) {
      const std::string k = m.has("from") ? "from" : "to";
      r.fail(m[k], m.child(k), "a burst happens at one moment, `at:`; `from` and `to` belong to rates");
    }
    if (!m.has("at")) r.fail(m.node(), m.child("at"), "a burst needs `at:`, the moment it happens");
    for (const char* k : {"arrival", "ramp_to", "diurnal"}) {
      if (m.has(k)) r.fail(m[k], m.child(k), std::string("a burst's calls all come at `at`; `") + k + "` belongs to rates");
    }
    a.rate_per_s = 0;
    a.to = a.from;
    return;
  }
  if (m.has("at")) r.fail(m["at"], m.child("at"), "`at` belongs to bursts; a rate runs `from` .. `to`");
  for (const char* k : {"peak", "high_share", "spell"}) {
    if (m.has(k) && a.arrival != Arrival::bursty) r.fail(m[k], m.child(k), "belongs to `arrival: bursty`");
  }
  if (a.arrival == Arrival::bursty) {
    for (const char* k : {"ramp_to", "diurnal"}) {
      if (m.has(k)) {
        r.fail(m[k], m.child(k), "shapes Poisson or evenly spaced arrivals; `arrival: bursty` has its own spells");
      }
    }
    check_bursty(r, m, a);
  }
  if (m.has("diurnal") && a.swing <= 0) {
    r.fail(m["diurnal"], m.child("diurnal") + ".swing",
           "is required: how far above and below `rate` the load swings, e.g. `swing: 60%`");
  }
  if (!m.has("rate")) r.fail(m.node(), m.child("rate"), "is required but missing (or give `burst` and `at`)");
  if (!m.has("to")) a.to = Time{} + r.run_duration();
  if (a.to <= a.from) r.fail(m.has("to") ? m["to"] : m.node(), m.child("to"), "must be after `from`");
}

// `diurnal: {swing, period, peak_at}`: the cycle's keys, members of the segment itself.
const Schema<ArrivalSpec>& diurnal_schema() {
  static const Schema<ArrivalSpec> schema = [] {
    Schema<ArrivalSpec> s(Style::flow, "The cycle of a rate: `rate` is its mean, and the load goes up to rate x (1 + swing) "
                                       "at `peak_at` (and every period after) and down to rate x (1 - swing) half a period away.");
    s.key("swing", &ArrivalSpec::swing, fraction_codec(),
          "how far the rate rises above and falls below `rate`, as a share of it (100%: down to nothing at the trough)",
          opt::shown("(required)"));
    s.key("period", &ArrivalSpec::period, duration_codec(ArrivalSpec::kCyclePeriod), "the cycle's length");
    s.key("peak_at", &ArrivalSpec::peak_at, duration_codec(), "when the rate is highest, counted from the run's start "
          "(with a day's period, the run starts at midnight)");
    return s;
  }();
  return schema;
}

}  // namespace

const Schema<ArrivalSpec>& arrival_schema() {
  static const Schema<ArrivalSpec> schema = [] {
    Schema<ArrivalSpec> s;
    s.key("rate", &ArrivalSpec::rate_per_s, rate_codec(), "calls per unit time; `0/s` for none",
          opt::shown("(or `burst`)"));
    s.last().differs = [](const ArrivalSpec& a, const ArrivalSpec&) { return a.burst == 0; };
    s.add(moment("from", "when a rate starts", "`0s`", &ArrivalSpec::from, false, true));
    s.add(moment("to", "when a rate stops (exclusive); may lie past the run's end", "`duration`", &ArrivalSpec::to,
                 false, false));
    s.key("arrival", &ArrivalSpec::arrival,
          choice_codec<Arrival>({{"poisson", Arrival::poisson}, {"constant", Arrival::constant}, {"bursty", Arrival::bursty}}),
          "Poisson (random, memoryless), evenly spaced, or bursty: Poisson at `peak` times the rate in high spells and "
          "lower between them, averaging `rate` (a two-state MMPP)");
    const auto bursty = [](const ArrivalSpec& a, const ArrivalSpec&) { return a.arrival == Arrival::bursty; };
    s.key("peak", &ArrivalSpec::peak, number_codec(1, 1e6), "bursty: the rate in a high spell, as a multiple of `rate`; at most 1 / `high_share` (5 with the "
          "default), so that the rate between high spells is not negative");
    s.last().differs = bursty;
    s.key("high_share", &ArrivalSpec::high_share, fraction_codec(), "bursty: the share of the time spent in high spells");
    s.last().differs = bursty;
    s.key("spell", &ArrivalSpec::spell, duration_codec(), "bursty: a high spell's mean length (exponential)");
    s.last().differs = bursty;
    s.key("ramp_to", &ArrivalSpec::ramp_to_per_s, rate_codec(),
          "a ramp: the rate at `to`, reached linearly from `rate` at `from` (Poisson or evenly spaced arrivals)",
          opt::shown("none"));
    s.section("diurnal", diurnal_schema(),
              "a daily swing: the rate times 1 + swing x cos(2 pi (t - peak_at) / period), t counted from the run's "
              "start, whose mean over a whole period is the rate itself (Poisson or evenly spaced arrivals)");
    s.key("burst", &ArrivalSpec::burst, integer_codec<std::uint64_t>(1, 100'000'000),
          "instead of a rate: this many calls all at once, at `at`", opt::shown("(or `rate`)"));
    s.add(moment("at", "when a burst happens", "(with `burst`)", &ArrivalSpec::from, true, true));
    s.check(check_arrival);
    return s;
  }();
  return schema;
}

Arrivals::Arrivals(std::vector<ArrivalSpec> segments, Rng& rng, Sink sink)
    : segments_(std::move(segments)),
      burst_done_(segments_.size(), 0),
      spells_(segments_.size()),
      reached_(segments_.size(), -1.0),
      rng_(rng),
      sink_(std::move(sink)) {
  RELAYSIM_ASSERT(static_cast<bool>(sink_), "arrivals have somewhere to go");
}

void Arrivals::install(Kernel& kernel) {
  for (std::uint32_t i = 0; i < segments_.size(); ++i) {
    kernel.at(segments_[i].from, [this, &kernel, i] { arrive(kernel, i); });
  }
}

void Arrivals::arrive(Kernel& kernel, std::uint32_t segment) {
  RELAYSIM_ASSERT(segment < segments_.size(), "a segment of the schedule");
  const ArrivalSpec& s = segments_[segment];
  if (s.burst > 0) {
    // A large burst comes in chunks, each its own event at the same moment: the run loop looks
    // at Ctrl-C and the memory limit between events, and ten million calls in one event would
    // keep it from looking for seconds.
    std::uint64_t& done = burst_done_[segment];
    RELAYSIM_ASSERT(done < s.burst, "a burst has calls left to make");
    const std::uint64_t chunk = std::min(kBurstChunk, s.burst - done);
    for (std::uint64_t n = 0; n < chunk; ++n) sink_(segment);
    done += chunk;
    if (done < s.burst) kernel.at(kernel.now(), [this, &kernel, segment] { arrive(kernel, segment); });
    if (chunk == kBurstChunk) kernel.yield();
    return;
  }
  if (s.shaped()) {
    // Calls where Lambda reaches a running sum of unit exponential draws (ones, evenly spaced);
    // the first comes at the first such moment, not at `from`, where a ramp from 0 has no rate.
    double& reached = reached_[segment];
    if (reached >= 0) sink_(segment);
    reached = std::max(reached, 0.0) + (s.arrival == Arrival::constant ? 1.0 : rng_.exponential(1.0));
    const Time next = std::max(kernel.now() + Duration{1}, s.when_calls_reach(reached, kernel.now()));
    if (next < s.to) kernel.at(next, [this, &kernel, segment] { arrive(kernel, segment); });
    return;
  }
  if (kernel.now() >= s.to || s.rate_per_s <= 0.0) return;
  sink_(segment);
  if (s.arrival == Arrival::bursty) {
    const Time next = next_bursty(segment, kernel.now());
    if (next < s.to) kernel.at(next, [this, &kernel, segment] { arrive(kernel, segment); });
    return;
  }
  const double mean_s = 1.0 / s.rate_per_s;
  const double gap_ns = (s.arrival == Arrival::constant ? mean_s : rng_.exponential(mean_s)) * 1e9;
  // A gap that reaches past the segment's end (a tiny rate, an unlucky draw) ends it; none
  // is shorter than the clock's nanosecond.
  const std::int64_t remaining = to_ns(s.to - kernel.now());
  if (!(gap_ns < static_cast<double>(remaining))) return;
  const Duration gap{std::max<std::int64_t>(1, static_cast<std::int64_t>(gap_ns))};
  if (gap.count() < remaining) kernel.after(gap, [this, &kernel, segment] { arrive(kernel, segment); });
}

namespace {

// A spell's length drawn with mean `mean`: at least 1 ns, and at most the longest duration there
// is (a draw far in an exponential's tail would not fit 64-bit nanoseconds).
Duration spell_length(Rng& rng, Duration mean) {
  const double ns = rng.exponential(to_seconds(mean)) * 1e9;
  return Duration{static_cast<std::int64_t>(std::clamp(ns, 1.0, static_cast<double>(kLongestDuration.count())))};
}

}  // namespace

Time Arrivals::next_bursty(std::uint32_t segment, Time now) {
  RELAYSIM_ASSERT(segment < segments_.size() && segments_[segment].arrival == Arrival::bursty, "a bursty segment of the schedule");
  const ArrivalSpec& s = segments_[segment];
  Spell& spell = spells_[segment];
  if (spell.ends == Time{}) {
    // The first call, at `from`: the spell it falls in, drawn from the long run's shares.
    spell.high = rng_.uniform01() < s.high_share;
    spell.ends = now + spell_length(rng_, spell.high ? s.spell : s.low_spell());
  }
  // Poisson within a spell; a gap that outlasts the spell starts over at its end (memoryless).
  Time t = now;
  while (t < s.to) {
    const double rate = spell.high ? s.high_rate_per_s() : s.low_rate_per_s();
    if (rate > 0) {
      const double gap_ns = rng_.exponential(1.0 / rate) * 1e9;
      if (gap_ns < static_cast<double>(to_ns(spell.ends - t))) return t + Duration{std::max<std::int64_t>(1, static_cast<std::int64_t>(gap_ns))};
    }
    t = spell.ends;
    spell.high = !spell.high;
    spell.ends = t + spell_length(rng_, spell.high ? s.spell : s.low_spell());
  }
  return kTimeNever;
}

}  // namespace relaysim::sim
