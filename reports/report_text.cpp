#include "reports/report_text.h"

#include <fmt/format.h>

namespace devshim {

std::string new_under_shim_text(const ReportDifferential& d) {
  const int added = new_under_shim(d);
  if (added == 0) return "";
  const int passed = class_count(d.counts, "new_passed"),
            failed = class_count(d.counts, "new_failed"),
            skipped = class_count(d.counts, "new_skipped");
  return fmt::format(
      "{} test{} of this run {} not in the baseline, whose file{} ran to {} end: cases that exist "
      "only where CUDA is \"available\" (a device list that gains a \"cuda\" device, a test "
      "defined under `if torch.cuda.is_available()`), compared with nothing. {} pass{}, {} "
      "fail{}, {} skip{}.",
      added, added == 1 ? "" : "s", added == 1 ? "is" : "are", added == 1 ? "" : "s",
      added == 1 ? "its" : "their", passed, passed == 1 ? "es" : "", failed, failed == 1 ? "s" : "",
      skipped, skipped == 1 ? "s" : "");
}

std::string regressions_by_gap_text(const ReportDifferential& d,
                                    const std::function<std::string(const std::string&)>& name) {
  std::string out = "By gap entry (what each is and what to do: Gaps, below): ";
  bool first = true;
  for (const auto& [gap, n] : regressions_by_gap(d)) {
    out += fmt::format("{}{} {}", first ? "" : ", ", n, gap.empty() ? "in no entry" : name(gap));
    first = false;
  }
  return out + ".";
}

std::string renumbered_text(const ReportDifferential& d) {
  auto it = d.counts.find("renumbered");
  if (it == d.counts.end() || it->second == 0) return "";
  const std::string head = fmt::format(
      "{} test{} of this run {} renumbered parameterized cases, not compared with the baseline "
      "one by one (which case is which cannot be told from their names); {} of them fail{}.",
      it->second, it->second == 1 ? "" : "s", it->second == 1 ? "is a" : "are",
      d.renumbered_failing, d.renumbered_failing == 1 ? "s" : "");
  const std::string where = " Their failures are in the failure clusters and the gap log.";
  if (d.renumbered_regressions == 0) {
    return head + " Their counts prove none of them a regression: they count as none." + where;
  }
  return head +
         fmt::format(
             " At least {} of them {} regressions: in their groups, more of the baseline's "
             "cases passed than this run's cases do not fail, so as many of those fail now or "
             "are gone. {} count{} as regressions, also with --fail-on regressions.",
             d.renumbered_regressions, d.renumbered_regressions == 1 ? "is a" : "are",
             d.renumbered_regressions == 1 ? "It" : "They",
             d.renumbered_regressions == 1 ? "s" : "") +
         where;
}

std::string no_listed_regression_text(const ReportDifferential& d) {
  if (!d.lost.empty()) {
    return fmt::format(
        "No test fails that passed without the shim, but {} test{} the baseline reported {} "
        "missing from this run (lost, below), and count as regressions.",
        d.lost.size(), d.lost.size() == 1 ? "" : "s", d.lost.size() == 1 ? "is" : "are");
  }
  if (d.renumbered_regressions > 0) {
    return fmt::format(
        "No test compared one by one fails that passed without the shim, but renumbered cases "
        "hold at least {} regression{} (below).",
        d.renumbered_regressions, d.renumbered_regressions == 1 ? "" : "s");
  }
  if (d.baseline_passed == 0) return nothing_compared_text(d);
  if (!d.cuda_branch_failures.empty()) {
    const std::size_t n = d.cuda_branch_failures.size();
    return fmt::format(
        "None: every test that passed without the shim on code that ran both ways passes with "
        "it. {} test{} that passed without the shim fail{} on a CUDA branch {} ran only with it "
        "(CUDA-branch failures, below): not regressions.",
        n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "they");
  }
  return "None: every test that passed without the shim passes with it.";
}

std::string cuda_branches_text(const ReportDifferential& d) {
  const int passed = class_count(d.counts, "cuda_branch_passed");
  const int failed = class_count(d.counts, "cuda_branch_failed");
  if (passed + failed == 0) return "";
  std::string causes;
  for (const auto& [cause, n] : cuda_branch_failures_by_cause(d)) {
    causes += fmt::format("{}{}: {}", causes.empty() ? " (" : ", ",
                          cuda_branch_cause_text(cause).title, n);
  }
  if (!causes.empty()) causes += ")";
  return fmt::format("CUDA branches that ran only under the shim: {} pass, {} fail{}.", passed,
                     failed, causes);
}

std::string nothing_compared_text(const ReportDifferential& d) {
  return fmt::format(
      "Nothing compared: baseline run {} passed no test, so none could regress. This says "
      "nothing of the shim: see the baseline's file errors.",
      d.baseline_run);
}

std::string differential_meaning(const ReportDifferential& d, const std::string& cls,
                                 const std::string& meaning) {
  if (cls != "newly_skipped" || d.masquerade_skips == 0) return meaning;
  return fmt::format(
      "{}; {} of them want no GPU and skip because the CUDA masquerade says one is "
      "there (expected)",
      meaning, d.masquerade_skips);
}

std::string later_relation_text(const std::string& relation) {
  return relation == "baseline" ? "shim run with this baseline" : "compared with this run";
}

std::string other_versions_text(const Report& r) {
  if (!r.other_versions) return "";
  const ReportOtherVersions& o = *r.other_versions;
  auto text = [](const RunVersions& v) {
    return fmt::format("torch {} and shim {}", v.torch.empty() ? "unknown" : v.torch,
                       v.shim.empty() ? "-" : v.shim);
  };
  return fmt::format(
      "No earlier run of this suite, targets, mode and policy has {}, so this run is compared "
      "with none. The newest such run, run {} ({}), has {}: `runner report {} --against {}` "
      "compares with it.",
      text(o.own), o.run, o.started_at, text(o.versions), r.run.id, o.run);
}

std::string start_mode_text(const nlohmann::json& environment) {
  if (!environment.is_object()) return "";
  const auto it = environment.find("start");
  if (it == environment.end() || !it->is_object()) return "";
  const std::string mode = it->value("mode", std::string("?"));
  if (mode == "warm") {
    std::string preloaded;
    if (auto p = it->find("preloaded"); p != it->end() && p->is_array()) {
      for (const auto& m : *p) {
        if (m.is_string()) preloaded += (preloaded.empty() ? "" : ", ") + m.get<std::string>();
      }
    }
    return fmt::format("warm ({} preloaded in {:.1f} s)", preloaded.empty() ? "nothing" : preloaded,
                       it->value("ready_s", 0.0));
  }
  const std::string why = it->value("why", std::string());
  return why.empty() ? mode : mode + " (" + why + ")";
}

std::string device_probe_text(const nlohmann::json& environment) {
  if (!environment.is_object()) return "";
  auto it = environment.find("device_probe");
  if (it == environment.end() || !it->is_object()) return "";
  const nlohmann::json& p = *it;
  // A torch outside the releases the probe supports (runner/engine/device_probe.h), said first.
  std::string outside;
  if (auto s = p.find("torch_support"); s != p.end() && s->is_object()) {
    if (auto ok = s->find("supported"); ok != s->end() && ok->is_boolean() && !ok->get<bool>()) {
      outside =
          fmt::format("torch {} is outside the releases devshim-probe supports ({}) · ",
                      s->value("torch", std::string("?")), s->value("range", std::string("?")));
    }
  }
  if (auto e = p.find("probe_error"); e != p.end() && e->is_string()) {
    return outside + "unavailable: " + e->get<std::string>();
  }
  std::string text = outside + "LibTorch " + p.value("torch_version", std::string("?"));
  if (auto devices = p.find("devices"); devices != p.end() && devices->is_array()) {
    for (const auto& d : *devices) {
      if (!d.is_object()) continue;
      std::string ok;
      if (auto m = d.find("matmul"); m != d.end() && m->is_object()) {
        for (const auto& [dtype, works] : m->items()) {
          if (works.is_boolean() && works.get<bool>()) ok += (ok.empty() ? "" : ", ") + dtype;
        }
      }
      text += fmt::format(" · {}: {} recommended (matmul {})", d.value("device", std::string("?")),
                          d.value("recommended_dtype", std::string("?")), ok.empty() ? "none" : ok);
    }
  }
  if (auto pol = p.find("policy"); pol != p.end() && pol->is_object()) {
    text += " · cuda → " + pol->value("cuda_redirects_to", std::string("?"));
  }
  return text;
}

std::vector<GlanceLine> glance_lines(const Report& r) {
  std::vector<GlanceLine> lines;
  if (r.differential) {
    const ReportDifferential& d = *r.differential;
    const int regressions = regressions_total(d);
    if (regressions == 0 && d.baseline_passed == 0) {
      lines.push_back({"Regressions: nothing compared",
                       fmt::format(" (baseline run {} passed no test).", d.baseline_run)});
    } else {
      lines.push_back(
          {fmt::format("Regressions: {}", regressions),
           fmt::format(" against baseline run {}: tests that passed without the shim on code "
                       "that ran both ways, and fail or are lost with it (the shim's to fix).",
                       d.baseline_run)});
    }
    if (const std::string branches = cuda_branches_text(d); !branches.empty()) {
      const std::size_t colon = branches.find(':');
      lines.push_back({branches.substr(0, colon + 1), branches.substr(colon + 1)});
    }
    lines.push_back({"", fmt::format("Unlocked: {} (skipped or failed without the shim, pass with "
                                     "it).",
                                     class_count(d.counts, "unlocked"))});
  }
  if (r.cuda_path) lines.push_back({"", cuda_path_text(*r.cuda_path)});
  if (!r.link_note.empty()) lines.push_back({"", r.link_note});
  return lines;
}

}  // namespace devshim
