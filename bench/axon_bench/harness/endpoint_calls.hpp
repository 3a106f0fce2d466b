// The benchmarks' calls of loan(), publish() and take(), each in one place:
// what counts as "no chunk free" or "nothing queued" (outcomes to wait out,
// not failures) is decided here only. Every worker loops through these.
#pragma once

#include <cstdint>

#include "harness/payload.hpp"
#include "harness/system.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

/// Keeps the compiler from dropping a checksum nobody reads.
inline void keep(std::uint64_t value) { asm volatile("" : : "r"(value)); }

/// Idles a busy-poll loop: cpu_relax(), and go on.
inline bool spin_once() noexcept {
  cpu_relax();
  return true;
}

/// Loans a chunk; while the pool is exhausted (the peers give chunks back
/// as they drop samples) calls `idle()`, which returns false to give up.
template <class T, class Idle>
axon::LoanResult<axon::Loan<T>> loan_waiting(axon::Publisher<T>& pub, Idle&& idle) {
  auto loan = pub.loan();
  while (loan.exhausted() && idle()) {
    loan = pub.loan();
  }
  return loan;
}

/// Loans (see loan_waiting()), writes every payload byte with `touch`, then
/// `stamp`, and publishes.
template <class T, class Idle>
axon::PublishResult publish_stamped(axon::Publisher<T>& pub, Stamp stamp, bool touch, Idle&& idle) {
  auto loan = loan_waiting(pub, idle);
  if (loan.exhausted()) {
    return axon::kPoolExhausted;
  }
  if (!loan) {
    return loan.error();
  }
  if (touch) {
    fill_payload((*loan)->data, sizeof(T), stamp.index);
  }
  write_stamp((*loan)->data, stamp);
  return pub.publish(std::move(*loan));
}

template <class T>
axon::PublishResult publish_stamped(axon::Publisher<T>& pub, Stamp stamp, bool touch = false) {
  return publish_stamped(pub, stamp, touch, spin_once);
}

/// What one try_take() found.
enum class Took : std::uint8_t { kNothing, kSample };

/// Takes a sample if one is queued and hands it to `use`; the sample goes
/// back when `use` returns.
template <class T, class Use>
axon::Result<Took> try_take(axon::Subscriber<T>& sub, Use&& use) {
  auto sample = sub.take();
  if (sample.empty()) {
    return Took::kNothing;
  }
  if (!sample) {
    return sample.error();
  }
  use(*sample);
  return Took::kSample;
}

/// Polls take() until a sample or a real error comes; while nothing is
/// queued calls `idle()`, which returns false to give up (the empty outcome
/// is returned then).
template <class T, class Idle>
axon::TakeResult<axon::Sample<T>> take_waiting(axon::Subscriber<T>& sub, Idle&& idle) {
  auto sample = sub.take();
  while (sample.empty() && idle()) {
    sample = sub.take();
  }
  return sample;
}

/// Busy-polls take() until a sample (or a real error) arrives.
template <class T>
axon::TakeResult<axon::Sample<T>> take_spinning(axon::Subscriber<T>& sub) {
  return take_waiting(sub, spin_once);
}

}  // namespace axon_bench::workers
