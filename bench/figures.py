"""Small helpers the bench scripts share for the figures they print."""

from __future__ import annotations

import os
import time


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (`share` 0.95 for p95); NaN for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def machine_cpu_s() -> float:
    """Busy CPU seconds of the whole machine so far (every program), from /proc/stat; 0 without it."""
    try:
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class MachineLoad:
    """What the machine did during a measured phase: load average, and CPUs kept busy by other programs."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.machine_start = machine_cpu_s()
        self.load_start = os.getloadavg()[0]

    def summary(self, own_cpu_s: float) -> str:
        """One line: `own_cpu_s` is the CPU time of what is measured (bench and server), left out of "others"."""
        wall = max(time.monotonic() - self.started, 1e-9)
        others = max(machine_cpu_s() - self.machine_start - own_cpu_s, 0.0) / wall
        return (
            f"load {self.load_start:.1f} -> {os.getloadavg()[0]:.1f}; other programs kept {others:.2f} of "
            f"{os.cpu_count()} CPUs busy over {wall:.0f} s"
        )
