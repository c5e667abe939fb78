"""The shim's settings, read from the environment once, when torch is patched.

Pure: ``from_environ(mapping)`` never touches torch or the process, so every setting is testable
with a plain dict. Bad values never stop the program (the shim runs inside other people's test
processes): they fall back to the default and are listed in ``Config.problems`` for the caller to
log.

| variable                 | values                                    | default   |
| ------------------------ | ----------------------------------------- | --------- |
| ``TORCH_ALLOW_REDIRECTS``| 1/true/yes/on: redirect on a CUDA machine too | off   |
| ``TORCHDEVICE_LOG_LEVEL``| DEBUG, INFO, WARNING, ERROR               | WARNING   |
| ``TORCHDEVICE_POLICY``   | default, accelerator-only                 | default   |
| ``TORCHDEVICE_RECORD``   | a file path: write the redirection record there at exit | none |
| ``TORCHDEVICE_DEVICE_OBJECTS`` | redirect, redirect-indexed, keep: device objects | redirect |
| ``TORCHDEVICE_CPU_MEMORY`` | a size (``2GiB``, bytes): the CPU's size as a device | host RAM |

TORCHDEVICE_DEVICE_OBJECTS: devshim/devices.py says what each value builds.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from devshim.devices import POLICIES as DEVICE_OBJECT_POLICIES
from devshim.policy import POLICIES

__all__ = ["Config", "LOG_LEVELS", "from_environ", "parse_size", "truthy"]

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_TRUE = ("1", "true", "yes", "on")


def truthy(value: str | None) -> bool:
    """The one truth test of every devshim switch: 1, true, yes, on (any case, spaces ignored)."""
    return (value or "").strip().lower() in _TRUE


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40,
          "tb": 1 << 40, "tib": 1 << 40}


def parse_size(text: str | None) -> int | None:
    """"2GiB", "512 MiB", "1.5g", "1073741824" -> bytes (units are powers of 1024); None when
    empty, not a size, or not positive."""
    text = (text or "").strip().lower()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz ")
    unit = text[len(number):].strip()
    try:
        value = int(float(number) * _UNITS[unit])
    except (ValueError, KeyError, OverflowError):
        return None
    return value if value > 0 else None


@dataclasses.dataclass(frozen=True)
class Config:
    allow_redirects: bool = False
    log_level: str = "WARNING"
    log_level_given: bool = False  # True when TORCHDEVICE_LOG_LEVEL named a valid level
    policy: str = "default"
    record_path: str | None = None
    device_objects: str = "redirect"
    cpu_memory: int | None = None  # bytes: TORCHDEVICE_CPU_MEMORY; None: the host's memory
    problems: tuple[str, ...] = ()


def from_environ(environ: Mapping[str, str] | None = None) -> Config:
    """The settings in ``environ`` (default: os.environ)."""
    env = os.environ if environ is None else environ
    problems = []

    level_text = env.get("TORCHDEVICE_LOG_LEVEL", "").strip().upper()
    level, level_given = "WARNING", False
    if level_text in LOG_LEVELS:
        level, level_given = level_text, True
    elif level_text:
        problems.append(f"TORCHDEVICE_LOG_LEVEL={level_text!r} is not one of "
                        f"{', '.join(LOG_LEVELS)}; using WARNING")

    policy = env.get("TORCHDEVICE_POLICY", "").strip() or "default"
    if policy not in POLICIES:
        problems.append(f"TORCHDEVICE_POLICY={policy!r} is not one of {', '.join(POLICIES)}; "
                        "using default")
        policy = "default"

    device_objects = env.get("TORCHDEVICE_DEVICE_OBJECTS", "").strip().lower() or "redirect"
    if device_objects not in DEVICE_OBJECT_POLICIES:
        problems.append(f"TORCHDEVICE_DEVICE_OBJECTS={device_objects!r} is not one of "
                        f"{', '.join(DEVICE_OBJECT_POLICIES)}; using redirect")
        device_objects = "redirect"

    cpu_memory_text = env.get("TORCHDEVICE_CPU_MEMORY", "").strip()
    cpu_memory = parse_size(cpu_memory_text)
    if cpu_memory_text and cpu_memory is None:
        problems.append(f"TORCHDEVICE_CPU_MEMORY={cpu_memory_text!r} is not a size such as 2GiB; "
                        "using the host's memory")

    record = env.get("TORCHDEVICE_RECORD", "").strip() or None
    if record is not None:
        record = os.path.abspath(record)

    return Config(allow_redirects=truthy(env.get("TORCH_ALLOW_REDIRECTS")), log_level=level,
                  log_level_given=level_given, policy=policy, record_path=record,
                  device_objects=device_objects, cpu_memory=cpu_memory,
                  problems=tuple(problems))
