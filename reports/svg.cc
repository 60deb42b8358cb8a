#include "reports/svg.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "reports/view.h"

namespace aftermath::svg {

std::string fmt(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, format);
  std::vsnprintf(out.data(), out.size(), format, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string ms_attr(double t) { return report::format_number(t, 3); }
std::string px(double v) { return report::format_number(v, 1); }

std::string tick_label(double t, double step) {
  if (step >= 1000) {
    int decimals = step >= 10000 ? 0 : (std::fmod(step, 1000) == 0 ? 0 : 1);
    return fmt("%.*f s", decimals, t / 1000);
  }
  int decimals = step >= 1 ? 0 : (step >= 0.1 ? 1 : 2);
  return fmt("%.*f ms", decimals, t);
}

double nice_step(double span, int target) {
  double raw = span / target;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  return step * mag;
}

}  // namespace aftermath::svg
