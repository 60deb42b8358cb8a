#include "harness/cli/suggest.h"

#include <algorithm>

namespace aftermath {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus one swap of neighbours, the
  // commonest typo ("--repaet").
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 3;  // more than 2 edits is not a typo
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d && 2 * d <= word.size()) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

namespace {

std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) out.push_back(n);
  return out;
}

}  // namespace

std::string mistyped_hint(CLI::App& app, const std::vector<std::string>& words) {
  if (words.empty()) return {};
  std::vector<std::string> commands;
  for (const CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
    commands.push_back(s->get_name());
  const std::string& first = words[0];
  if (first.empty() || first[0] == '-') return {};
  if (std::find(commands.begin(), commands.end(), first) == commands.end()) {
    std::string near = nearest(first, commands);
    if (near.empty()) return {};
    return first + ": no such command; did you mean `aftermath " + near + "`?";
  }
  CLI::App* cmd = app.get_subcommand(first);
  std::vector<std::string> known = long_names(*cmd);
  for (const auto& n : long_names(app)) known.push_back(n);
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") break;
    if (w.size() < 3 || w.compare(0, 2, "--") != 0) continue;
    std::string name =
        w.substr(2, w.find('=') == std::string::npos ? std::string::npos : w.find('=') - 2);
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string near = nearest(name, known);
    std::string hint = "--" + name + ": no such option of `aftermath " + first + "`";
    if (near.empty()) return hint + " (see `aftermath " + first + " --help`)";
    return hint + "; did you mean --" + near + "?";
  }
  return {};
}

}  // namespace aftermath
