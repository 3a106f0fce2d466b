#include "soak/soak_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

namespace axon_bench {
namespace {

/// printf into a std::string (this file links nothing of axon-bench's, so its tests need nothing else).
__attribute__((format(printf, 1, 2))) std::string printed(const char* fmt, ...) {
  char text[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  return text;
}

std::string us_text(double ns) { return printed("%.1f us", ns / 1e3); }

/// The values with a finite sample whose time is in [from, to).
std::vector<double> values_between(std::span<const double> t, std::span<const double> v, double from, double to) {
  std::vector<double> out;
  for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
    if (std::isfinite(v[i]) && t[i] >= from && t[i] < to) {
      out.push_back(v[i]);
    }
  }
  return out;
}

double mean_of(std::span<const double> v) {
  double sum = 0;
  for (const double x : v) {
    sum += x;
  }
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double min_of(std::span<const double> v) {
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : *std::min_element(v.begin(), v.end());
}

double max_of(std::span<const double> v) {
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : *std::max_element(v.begin(), v.end());
}

std::string kib_text(double kib) {
  return std::fabs(kib) >= 1024 ? printed("%.2f MiB", kib / 1024) : printed("%.0f KiB", kib);
}

SoakVerdict judge_memory(std::span<const double> t, std::span<const double> v, const SoakBounds& b) {
  constexpr double kForever = std::numeric_limits<double>::infinity();
  std::vector<double> tj;
  std::vector<double> vj;
  for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
    if (std::isfinite(v[i]) && t[i] >= b.warmup_s) {
      tj.push_back(t[i]);
      vj.push_back(v[i]);
    }
  }
  const double span_min = tj.empty() ? 0 : (tj.back() - tj.front()) / 60;
  const auto tenth = std::max<std::size_t>(1, vj.size() / 10);
  const double level = mean_of(std::span(vj).first(std::min(tenth, vj.size())));
  const double growth = mean_of(std::span(vj).last(std::min(tenth, vj.size()))) - level;
  const double growth_bound = std::max(b.memory_growth_floor_kib, b.memory_growth_fraction * level);
  const double slope_bound =
      span_min > 0 ? std::max(b.memory_slope_kib_per_min, b.memory_growth_floor_kib / span_min) : kForever;
  const double slope = fit_line(tj, vj).slope * 60;  // per second -> per minute
  SoakVerdict out;
  out.pass = tj.size() >= 2 && !values_between(t, v, b.warmup_s + b.reference_s, kForever).empty() &&
             slope <= slope_bound && growth <= growth_bound;
  out.figures =
      printed("level %s, slope %.1f KiB/min (bound %.1f), growth %s (bound %s) over %.1f min", kib_text(level).c_str(),
              slope, slope_bound, kib_text(growth).c_str(), kib_text(growth_bound).c_str(), span_min);
  return out;
}

}  // namespace

LineFit fit_line(std::span<const double> t, std::span<const double> v) {
  LineFit fit;
  double st = 0;
  double sv = 0;
  for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
    if (std::isfinite(v[i])) {
      st += t[i];
      sv += v[i];
      ++fit.samples;
    }
  }
  if (fit.samples < 2) {
    fit.intercept = fit.samples == 1 ? sv : 0;
    return fit;
  }
  const double n = static_cast<double>(fit.samples);
  const double mt = st / n;
  const double mv = sv / n;
  double stt = 0;
  double stv = 0;
  for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
    if (std::isfinite(v[i])) {
      stt += (t[i] - mt) * (t[i] - mt);
      stv += (t[i] - mt) * (v[i] - mv);
    }
  }
  fit.slope = stt > 0 ? stv / stt : 0;
  fit.intercept = mv - fit.slope * mt;
  return fit;
}

SoakVerdict judge_series(SoakRule rule, std::span<const double> t, std::span<const double> v, const SoakBounds& b) {
  if (rule == SoakRule::kMemory) {
    return judge_memory(t, v, b);
  }
  constexpr double kForever = std::numeric_limits<double>::infinity();
  const double reference_end = b.warmup_s + b.reference_s;
  const std::vector<double> reference = values_between(t, v, b.warmup_s, reference_end);
  const std::vector<double> after = values_between(t, v, reference_end, kForever);
  SoakVerdict out;
  if (reference.empty() || after.empty()) {
    out.figures = printed("run too short: %zu samples in the reference window (%.0f-%.0f s), %zu after it",
                          reference.size(), b.warmup_s, reference_end, after.size());
    return out;
  }
  // The last window, as long as the reference one.
  const double last_t = *std::max_element(t.begin(), t.end());
  const std::vector<double> last = values_between(t, v, std::max(reference_end, last_t - b.reference_s), kForever);
  if (rule == SoakRule::kNoGrowth) {
    out.pass = min_of(last) <= min_of(reference);
    out.figures = printed("min %g in the last %.0f s (bound: at most the min %g of %.0f-%.0f s); max %g after %.0f s",
                          min_of(last), b.reference_s, min_of(reference), b.warmup_s, reference_end, max_of(after),
                          reference_end);
    return out;
  }
  out.pass = max_of(last) >= max_of(reference);
  out.figures = printed("max %g in the last %.0f s (bound: at least the max %g of %.0f-%.0f s)", max_of(last),
                        b.reference_s, max_of(reference), b.warmup_s, reference_end);
  return out;
}

SoakVerdict judge_latency(std::span<const double> p99_ns, std::span<const std::uint64_t> messages, double window_s,
                          const SoakBounds& b) {
  std::size_t first = 0;
  while (first < p99_ns.size() && static_cast<double>(first) * window_s + 1e-9 < b.warmup_s) {
    ++first;
  }
  SoakVerdict out;
  const std::size_t last = p99_ns.empty() ? 0 : p99_ns.size() - 1;
  if (p99_ns.empty() || first >= last) {
    out.figures = printed("run too short: %zu windows of %.0f s, the first after the %.0f s warm-up is %zu",
                          p99_ns.size(), window_s, b.warmup_s, first);
    return out;
  }
  // A drift persists: judged on the lower p99 of the last two windows when both follow the reference. One
  // window's p99 of a few thousand messages moves with a single scheduling hiccup (docs/reliability.md, "Soak").
  const std::size_t before_last = last >= first + 2 ? last - 1 : last;
  const double a = p99_ns[first];
  if (!std::isfinite(a) || !std::isfinite(p99_ns[before_last]) || !std::isfinite(p99_ns[last])) {
    out.figures = printed("no message in window %zu, %zu or %zu", first, before_last, last);
    return out;
  }
  const double z = std::min(p99_ns[before_last], p99_ns[last]);
  const auto messages_in = [&](std::size_t w) { return messages.size() > w ? messages[w] : std::uint64_t{0}; };
  const std::uint64_t fewest = std::min({messages_in(first), messages_in(before_last), messages_in(last)});
  if (fewest < b.latency_min_messages) {
    out.pass = true;
    out.judged = false;
    out.figures =
        printed("not judged: %llu messages in a window, a p99 needs %llu (a longer --window gives more)",
                static_cast<unsigned long long>(fewest), static_cast<unsigned long long>(b.latency_min_messages));
    return out;
  }
  const double bound = std::max(a * b.latency_p99_ratio, a + b.latency_floor_ns);
  out.pass = z <= bound;
  const std::string compared = before_last == last ? printed(", %s in window %zu", us_text(z).c_str(), last)
                                                   : printed("; %s in window %zu, %s in window %zu: the lower %s",
                                                             us_text(p99_ns[before_last]).c_str(), before_last,
                                                             us_text(p99_ns[last]).c_str(), last, us_text(z).c_str());
  out.figures = printed("p99 %s in window %zu%s (bound %s: %.3gx or +%s)", us_text(a).c_str(), first, compared.c_str(),
                        us_text(bound).c_str(), b.latency_p99_ratio, us_text(b.latency_floor_ns).c_str());
  return out;
}

}  // namespace axon_bench
