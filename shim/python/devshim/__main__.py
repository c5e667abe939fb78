"""``python -m devshim carried|status [--json]``: what the shim carries, and what it is doing;
``python -m devshim sweep PACKAGE ...``: the import sweep (devshim/sweep.py, its own options);
``python -m devshim conformance``: every patched API under torch's machinery
(devshim/conformance.py).

- ``carried --json``: {"carried": [...], "raises_not_implemented": [...]} (imports torch).
- ``status --json``: devshim.status() after importing torch when it is importable, so that the
  mode, hardware and device used are filled in when the shim is active
  (ACTIVATE_TORCH_DEVICE=1 with the shim folder on PYTHONPATH).

Without ``--json`` the same is printed for people. Exit status 0, 2 on bad usage, 1 when torch
cannot be imported for ``carried``.
"""

from __future__ import annotations

import argparse
import json
import sys

import devshim


def _carried(as_json: bool) -> int:
    try:
        carried, raising = devshim.carried_apis(), devshim.raising_apis()
    except ImportError as e:
        print(f"devshim: error: torch cannot be imported: {e}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps({"carried": carried, "raises_not_implemented": raising}, indent=1))
    else:
        print(f"carried ({len(carried)}):")
        for name in carried:
            print(f"  {name}")
        print(f"raise NotImplementedError ({len(raising)}):")
        for name in raising:
            print(f"  {name}")
    return 0


def _status(as_json: bool) -> int:
    try:
        import torch  # noqa: F401  (patched on import when the shim is active)
    except ImportError:
        pass
    state = devshim.status()
    if as_json:
        print(json.dumps(state, indent=1, sort_keys=True))
    else:
        for key in sorted(state):
            print(f"{key}: {state[key]}")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sweep"]:
        from devshim import sweep

        return sweep.main(argv[1:])
    if argv[:1] == ["conformance"]:
        from devshim import conformance

        return conformance.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m devshim", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("carried", "status", "sweep", "conformance"),
                        help="sweep, conformance: see python -m devshim <command> --help")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    if args.command == "carried":
        return _carried(args.json)
    return _status(args.json)


if __name__ == "__main__":
    sys.exit(main())
