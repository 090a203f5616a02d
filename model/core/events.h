// Events: what a model tells its observers, as small typed structs delivered to a list of sinks.
//
// A system declares its events once, each a struct next to the others (with a `mix` member when
// it counts towards the run's fingerprint), and lists them in one EventBus type. A sink is any
// class that derives SinkFor<E> for the events it wants; EventBus::attach finds those bases, and
// emit<E> calls exactly the sinks of E, in attach order. Adding an event is one struct and one
// name in the list; a sink that does not care about it needs no change, and the fingerprint sink
// picks it up by itself.
//
// Events carry references to the emitter's data: valid during the call only. Sinks are called
// synchronously and must not call back into the model.
#pragma once

#include <concepts>
#include <tuple>
#include <type_traits>
#include <vector>

#include "model/core/fingerprint.h"

namespace relaysim {

template <class E>
class SinkFor {
 public:
  virtual void on(const E& event) = 0;

 protected:
  ~SinkFor() = default;
};

template <class... Es>
class EventBus {
 public:
  EventBus() = default;
  EventBus(const EventBus&) = delete;
  EventBus& operator=(const EventBus&) = delete;

  // Attaches `sink` to every event of this bus it is a SinkFor.
  template <class Sink>
  void attach(Sink& sink) {
    static_assert((std::is_base_of_v<SinkFor<Es>, Sink> || ...), "a sink must take at least one event of this bus");
    (attach_if<Es>(sink), ...);
  }

  template <class E>
  void emit(const E& event) const {
    static_assert((std::is_same_v<E, Es> || ...), "not an event of this bus");
    for (SinkFor<E>* s : std::get<std::vector<SinkFor<E>*>>(sinks_)) s->on(event);
  }

 private:
  template <class E, class Sink>
  void attach_if(Sink& sink) {
    if constexpr (std::is_base_of_v<SinkFor<E>, Sink>) {
      std::get<std::vector<SinkFor<E>*>>(sinks_).push_back(static_cast<SinkFor<E>*>(&sink));
    }
  }

  std::tuple<std::vector<SinkFor<Es>*>...> sinks_;
};

// An event that counts towards the fingerprint says how.
template <class E>
concept Fingerprinted = requires(const E& e, Fingerprint& fp) { e.mix(fp); };

// The fingerprint as a sink: it takes every fingerprinted event of the buses it is attached to.
template <class E>
class FingerprintFor {  // an event that is not fingerprinted: not a sink for it
 public:
  explicit FingerprintFor(Fingerprint&) {}

 protected:
  ~FingerprintFor() = default;
};
template <Fingerprinted E>
class FingerprintFor<E> : public SinkFor<E> {
 public:
  explicit FingerprintFor(Fingerprint& fp) : fp_(fp) {}
  void on(const E& e) override { e.mix(fp_); }

 protected:
  ~FingerprintFor() = default;

 private:
  Fingerprint& fp_;
};

template <class Bus>
class FingerprintSink;
template <class... Es>
class FingerprintSink<EventBus<Es...>> final : public FingerprintFor<Es>... {
 public:
  explicit FingerprintSink(Fingerprint& fp) : FingerprintFor<Es>(fp)... {}
};

}  // namespace relaysim
