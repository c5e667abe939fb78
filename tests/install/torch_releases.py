#!/usr/bin/env python3
"""The installed wheel on several torch releases: for each, a venv of this Python's version with
that torch, the wheel and the bundled suite's needs, then

- devshim-probe must report the LibTorch it loaded, the venv's (its version is the venv's
  torch.__version__, its library the venv's torch/lib), and `runner devices` must judge it against
  the supported releases (docs/install.md#torch-releases): inside them, no line; outside them, the
  line that says so, never another version;
- inside the supported releases, the bundled suite's differential from the installed runner
  (0 regressions), the shim's conformance check (python -m devshim conformance) and the import sweep
  of torch (python -m devshim sweep torch).

    python tests/install/torch_releases.py WHEEL_DIR WORK [RELEASE ...]

WHEEL_DIR holds the one wheel cmake/build_wheel.sh made; WORK keeps a venv per release
(WORK/venv-<release>, reused while its requirements are the same: each is 1 to 7 GB); RELEASE
defaults to RELEASES. It prints one Markdown table row per release (docs/install.md's table) and
exits 1 when any check failed. torch releases above the cap of /etc/xdg/pip (this machine's kind
caps pip at torch 2.14.1) are installed with PIP_CONSTRAINT=/dev/null. ctest runs it as
torch_releases (label other-torch, left out of ./test.sh: about 20 GB of downloads the first time).
"""
from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Beside this file: a user's environment (venv active), and a venv kept between runs.
from test_wheel import prepared_venv, user_environment

ROOT = Path(__file__).resolve().parents[2]
# The supported range's ends and a release in between, and one release before it (to see the
# probe and `runner devices` say so).
RELEASES = ["2.13.0", "2.14.1", "2.15.0", "2.8.0"]


def supported_range() -> tuple[tuple[int, int], tuple[int, int]]:
    """(oldest, newest) as CMakeLists.txt sets them (DEVSHIM_TORCH_OLDEST, DEVSHIM_TORCH_NEWEST)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    ends = []
    for name in ("DEVSHIM_TORCH_OLDEST", "DEVSHIM_TORCH_NEWEST"):
        m = re.search(rf"^set\({name} (\d+)\.(\d+)\)$", text, re.M)
        if not m:
            sys.exit(f"torch_releases: CMakeLists.txt sets no {name}")
        ends.append((int(m.group(1)), int(m.group(2))))
    return ends[0], ends[1]


def run(argv, timeout=3600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)


def check_release(venv: Path, release: str, supported: bool, out: Path) -> tuple[list, list]:
    """(what was run, failures) for one venv."""
    ran, failures = [], []
    env = user_environment(venv)
    python = str(venv / "bin" / "python")
    torch = run([python, "-c", "import torch; print(torch.__version__)"], env=env, cwd=out)
    if torch.returncode != 0:
        return ran, [f"torch does not import: {torch.stderr[-500:]}"]
    torch = torch.stdout.strip()

    devices = run([str(venv / "bin" / "runner"), "devices", "--json"], env=env, cwd=out,
                  timeout=600)
    text = run([str(venv / "bin" / "runner"), "devices"], env=env, cwd=out, timeout=600).stdout
    ran.append("probe")
    try:
        probe = json.loads(devices.stdout)["device_probe"]
    except (ValueError, KeyError) as e:
        return ran, [f"runner devices --json: {e}: {devices.stdout[-500:]}{devices.stderr[-500:]}"]
    support = probe.get("torch_support", {})
    if "probe_error" in probe:
        loaded = f"probe did not start: {probe['probe_error']}"
        if supported:
            failures.append(f"the probe did not start: {probe['probe_error']}")
    else:
        loaded = f"probe: torch {probe.get('torch_version')} from {probe.get('torch_library')}"
        if probe.get("torch_version") != torch:
            failures.append(f"the probe reports torch {probe.get('torch_version')}, the venv has "
                            f"{torch}")
        if not str(probe.get("torch_library", "")).startswith(str(venv.resolve())):
            failures.append(f"the probe loaded {probe.get('torch_library')}, not the venv's torch")
    if support.get("torch") != torch or support.get("supported") is not supported:
        failures.append(f"runner devices judges {support}, expected torch {torch} "
                        f"supported={supported}")
    if not supported and "is outside the torch releases devshim-probe supports" not in text:
        failures.append(f"runner devices does not say torch {torch} is outside:\n{text}")
    print(f"torch_releases: {release}: {loaded}", file=sys.stderr)
    if not supported:
        return ran, failures

    suite = out / "cuda-idioms"
    shutil.copytree(ROOT / "suites" / "cuda-idioms", suite, dirs_exist_ok=True)
    diff = run([str(venv / "bin" / "runner"), str(suite), "--differential", "--python", python,
                "--db", str(out / "results.db"), "--out", str(out / "report")],
               env=env, cwd=out)
    ran.append("differential")
    summary = re.search(r"\d+ regressions? \(.*?\), \d+ unlocked", diff.stdout)
    print(f"torch_releases: {release}: differential: {summary.group(0) if summary else '?'}",
          file=sys.stderr)
    if not summary or not summary.group(0).startswith("0 regressions"):
        failures.append(f"differential: {summary.group(0) if summary else diff.stdout[-1500:]}")
    for name, argv in (("conformance", [python, "-m", "devshim", "conformance"]),
                       ("sweep torch", [python, "-m", "devshim", "sweep", "torch"])):
        done = run(argv, env=env, cwd=out)
        ran.append(name)
        last = (done.stdout.strip().splitlines() or ["?"])[-1]
        print(f"torch_releases: {release}: {name}: exit {done.returncode}: {last}", file=sys.stderr)
        if done.returncode != 0:
            failures.append(f"{name} exited {done.returncode}: {done.stdout[-1500:]}"
                            f"{done.stderr[-1500:]}")
    return ran, failures


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    wheel_dir, work = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
    releases = sys.argv[3:] or RELEASES
    wheels = sorted(wheel_dir.glob("devshim-*manylinux*.whl"))
    if len(wheels) != 1:
        print(f"torch_releases: expected one wheel in {wheel_dir}: {wheels}", file=sys.stderr)
        return 2
    oldest, newest = supported_range()
    work.mkdir(parents=True, exist_ok=True)
    status = 0
    today = datetime.date.today().isoformat()
    rows = []
    for release in releases:
        major, minor = (int(x) for x in release.split(".")[:2])
        supported = oldest <= (major, minor) <= newest
        venv = work / f"venv-{release}"
        why = prepared_venv(sys.executable, venv, f"torch=={release}", wheels[0],
                            pip_env=dict(os.environ, PIP_CONSTRAINT="/dev/null"))
        if why:
            print(f"torch_releases: {release}: no venv: {why}", file=sys.stderr)
            rows.append(f"| {release} | venv | not installed | {today} |")
            status = 1
            continue
        with tempfile.TemporaryDirectory(prefix=f"devshim-torch-{release}-") as folder:
            ran, failures = check_release(venv, release, supported, Path(folder))
        for failure in failures:
            print(f"torch_releases: {release}: FAILED: {failure}", file=sys.stderr)
        status |= bool(failures)
        verdict = "passed" if not failures else "failed: " + "; ".join(f[:120] for f in failures)
        rows.append(f"| {release} | {', '.join(ran)} | {verdict} | {today} |")
    print("| torch | run | result | date |\n| --- | --- | --- | --- |")
    print("\n".join(rows))
    return status


if __name__ == "__main__":
    sys.exit(main())
