"""Figures, targets and skips collected by the benchmark; the table and the JSON.

A :class:`Metric` holds one figure for one shell: its samples (one per run, in its unit),
or a single derived value (a ratio of medians, a count). Targets are upper bounds checked
against the median; a miss is reported, never raised.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Metric:
    """One figure of one measurement in one shell."""

    measurement: str  # "latency", "throughput", ...
    shell: str
    name: str  # what was measured, for people
    unit: str  # "ms", "s", "MiB", "x" (a ratio), "runs"
    samples: list[float]  # one per run; a single value when ``derived``
    derived: bool = False  # computed from other figures: no spread
    target: str = ""  # e.g. "<= 45 ms"; empty when the figure is for context only
    passed: bool | None = None  # None when there is no target
    text: str = ""  # shown instead of the number (e.g. "15/15")
    note: str = ""

    @property
    def median(self) -> float:
        """Median of the samples, in ``unit``."""
        return statistics.median(self.samples)

    @property
    def minimum(self) -> float:
        """Smallest sample, in ``unit``."""
        return min(self.samples)

    @property
    def maximum(self) -> float:
        """Largest sample, in ``unit``."""
        return max(self.samples)

    def at_most(self, limit: float) -> Metric:
        """Set the target ``median <= limit`` (in ``unit``) and check it; returns self."""
        self.target = f"<= {_number(limit, self.unit)} {self.unit}"
        self.passed = self.median <= limit
        return self

    def at_least(self, limit: float) -> Metric:
        """Set the target ``median >= limit`` (in ``unit``: a rate) and check it; returns
        self."""
        self.target = f">= {_number(limit, self.unit)} {self.unit}"
        self.passed = self.median >= limit
        return self

    def to_json(self) -> dict[str, Any]:
        """The figure as a JSON-ready dict; times keep the unit named in ``unit``."""
        record: dict[str, Any] = {
            "measurement": self.measurement,
            "shell": self.shell,
            "name": self.name,
            "unit": self.unit,
            "runs": len(self.samples),
            "median": self.median,
            "min": self.minimum,
            "max": self.maximum,
            "samples": self.samples,
            "derived": self.derived,
            "target": self.target or None,
            "passed": self.passed,
        }
        if self.text:
            record["text"] = self.text
        if self.note:
            record["note"] = self.note
        return record


def ratio(
    measurement: str, shell: str, name: str, numerator: Metric, denominator: Metric
) -> Metric:
    """The derived figure ``median(numerator) / median(denominator)``."""
    value = numerator.median / denominator.median if denominator.median else float("inf")
    return Metric(measurement, shell, name, "x", [value], derived=True)


def count_ok(measurement: str, shell: str, name: str, oks: list[bool]) -> Metric:
    """How many runs were right, as ``k/n``; passes only when all were."""
    good = sum(oks)
    return Metric(
        measurement,
        shell,
        name,
        "runs",
        [float(good)],
        derived=True,
        target=f"{len(oks)}/{len(oks)}",
        passed=good == len(oks),
        text=f"{good}/{len(oks)}",
    )


@dataclass
class Report:
    """Everything one benchmark run produced."""

    machine: dict[str, Any]
    config: dict[str, Any]
    metrics: list[Metric] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    duration_s: float = 0.0

    def skip(self, measurement: str, shell: str, reason: str) -> None:
        """Record a measurement that was not run, and why."""
        self.skipped.append({"measurement": measurement, "shell": shell, "reason": reason})

    def error(self, measurement: str, shell: str, message: str) -> None:
        """Record a measurement that could not be completed."""
        self.errors.append({"measurement": measurement, "shell": shell, "error": message})

    def to_json(self) -> dict[str, Any]:
        """The whole report as a JSON-ready dict."""
        checked = [m for m in self.metrics if m.passed is not None]
        return {
            "machine": self.machine,
            "config": self.config,
            "duration_s": self.duration_s,
            "summary": {
                "targets": len(checked),
                "passed": sum(1 for m in checked if m.passed),
                "missed": sum(1 for m in checked if not m.passed),
                "skipped": len(self.skipped),
                "errors": len(self.errors),
            },
            "metrics": [m.to_json() for m in self.metrics],
            "skipped": self.skipped,
            "errors": self.errors,
        }

    def write_json(self, path: Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")

    def table(self) -> str:
        """The human-readable report: machine header, figures with targets, skips, errors."""
        lines = [f"{key:<10} {value}" for key, value in _header_items(self.machine, self.config)]
        if self.config.get("quick"):
            lines.append("--quick: sizes are too small for the targets to mean anything")
        lines.append("")
        header = ("measurement", "shell", "figure", "median", "min", "max", "target", "result")
        rows = [header, *(_row(m) for m in self.metrics)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        right = {3, 4, 5}
        for index, row in enumerate(rows):
            cells = [
                cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
                for i, cell in enumerate(row)
            ]
            lines.append("  ".join(cells).rstrip())
            if index == 0:
                lines.append("  ".join("-" * w for w in widths))
        for skip in self.skipped:
            lines.append(f"SKIPPED {skip['measurement']} ({skip['shell']}): {skip['reason']}")
        for error in self.errors:
            lines.append(f"ERROR {error['measurement']} ({error['shell']}): {error['error']}")
        summary = self.to_json()["summary"]
        lines.append(
            f"{summary['passed']}/{summary['targets']} targets met, {summary['missed']} missed, "
            f"{summary['skipped']} skipped, {summary['errors']} errors; "
            f"{self.duration_s:.1f} s in all"
        )
        return "\n".join(lines)


def _header_items(machine: dict[str, Any], config: dict[str, Any]) -> list[tuple[str, str]]:
    items = [(key, str(value)) for key, value in machine.items()]
    items.append(("config", ", ".join(f"{k}={v}" for k, v in config.items())))
    return items


def _row(metric: Metric) -> tuple[str, ...]:
    unit = metric.unit
    if metric.text:
        median, low, high = metric.text, "", ""
    elif metric.derived:
        median, low, high = f"{_number(metric.median, unit)} {unit}", "", ""
    else:
        median, low, high = (
            f"{_number(value, unit)} {unit}"
            for value in (metric.median, metric.minimum, metric.maximum)
        )
    verdict = "" if metric.passed is None else ("PASS" if metric.passed else "MISS")
    name = metric.name + (f" [{metric.note}]" if metric.note else "")
    return (metric.measurement, metric.shell, name, median, low, high, metric.target, verdict)


def _number(value: float, unit: str) -> str:
    """``value`` with as many decimals as its unit deserves."""
    decimals = {"ms": 1, "s": 3, "MiB": 1, "x": 2, "MB/s": 1}.get(unit, 0)
    return f"{value:.{decimals}f}"
