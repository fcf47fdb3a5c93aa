"""Small helpers the bench scripts share for the figures they print."""

from __future__ import annotations


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (`share` 0.95 for p95); NaN for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]
