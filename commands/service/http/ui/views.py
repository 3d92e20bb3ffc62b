"""What the pages show, computed from the facade (in its thread) as plain dicts and lists:
content diffs, the graph's SVG layout, chart bars."""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from mnemoledger.commands.audit.history_api import HistoryEntry
from mnemoledger.commands.audit.report import Report
from mnemoledger.commands.models import EdgeOut, MemoryOut
from mnemoledger.ledger.policy import BUFFER, CORE, LAYERS, WORKING

LAYER_COLOURS = {BUFFER: "#9aa5b1", WORKING: "#3b82f6", CORE: "#d97706"}
"""Node colours of the graph, one per layer (the legend shows them)."""

GRAPH_WIDTH, GRAPH_HEIGHT = 960, 640
"""The graph's SVG, in pixels: the nodes on a circle in the middle, their labels beside."""

CHART_WIDTH = 560
"""Width of a bar chart's longest bar, in pixels."""


def unified_lines(old: str, new: str) -> list[tuple[str, str]]:
    """A line diff of two texts as (css class, line) pairs: add, del, hunk or ctx."""
    lines: list[tuple[str, str]] = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2):
        if line.startswith(("---", "+++")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")
        lines.append((kind, line))
    return lines


def side_by_side(old: str, new: str, old_label: str, new_label: str) -> str:
    """A side-by-side HTML table of two texts (difflib's, escaped by difflib)."""
    return difflib.HtmlDiff(wrapcolumn=70).make_table(
        old.splitlines(), new.splitlines(), old_label, new_label, context=False
    )


def memory_timeline(entries: Sequence[HistoryEntry]) -> list[dict[str, Any]]:
    """A memory's events, each with the content diff it made (when it changed content)."""
    shown: list[dict[str, Any]] = []
    for entry in entries:
        diff: list[tuple[str, str]] = []
        if entry.old_ref is not None and entry.new_ref is not None:
            diff = unified_lines(entry.old_ref, entry.new_ref)
        shown.append({"entry": entry, "diff": diff})
    return shown


def layer_groups(memories: Sequence[MemoryOut]) -> dict[str, list[MemoryOut]]:
    """Memories by layer, every layer present (Buffer, Working, Core order)."""
    groups: dict[str, list[MemoryOut]] = {layer: [] for layer in LAYERS}
    for memory in memories:
        groups.setdefault(memory.layer, []).append(memory)
    return groups


def graph_svg(memories: Sequence[MemoryOut], edges: Sequence[EdgeOut]) -> dict[str, Any]:
    """Nodes on a circle (coloured by layer) and the edges between them, as SVG coordinates."""
    centre_x, centre_y = GRAPH_WIDTH / 2, GRAPH_HEIGHT / 2
    radius = min(centre_y - 40, centre_x - 260)  # room for the labels beside the nodes
    count = max(len(memories), 1)
    nodes: dict[str, dict[str, Any]] = {}
    for index, memory in enumerate(memories):
        angle = 2 * math.pi * index / count - math.pi / 2
        x = round(centre_x + radius * math.cos(angle), 1)
        right = x >= centre_x - 1
        nodes[memory.id] = {
            "id": memory.id,
            "x": x,
            "y": round(centre_y + radius * math.sin(angle), 1),
            "label_x": x + 14 if right else x - 14,
            "anchor": "start" if right else "end",
            "colour": LAYER_COLOURS.get(memory.layer, "#888"),
            "label": memory.content,
            "layer": memory.layer,
        }
    lines = [
        {
            "x1": nodes[e.from_id]["x"],
            "y1": nodes[e.from_id]["y"],
            "x2": nodes[e.to]["x"],
            "y2": nodes[e.to]["y"],
            "width": round(0.5 + 3 * e.strength, 2),
            "title": f"{e.type} ({e.strength:.2f})",
        }
        for e in edges
        if e.from_id in nodes and e.to in nodes
    ]
    return {
        "width": GRAPH_WIDTH,
        "height": GRAPH_HEIGHT,
        "nodes": list(nodes.values()),
        "edges": lines,
    }


def bars(values: dict[str, int]) -> list[dict[str, Any]]:
    """Horizontal bars scaled to the largest value."""
    top = max(values.values(), default=0) or 1
    return [
        {"label": label, "value": value, "width": max(1, round(CHART_WIDTH * value / top))}
        for label, value in values.items()
    ]


def report_charts(report: Report) -> dict[str, list[dict[str, Any]]]:
    """Operations per time bucket and LLM tokens per stage, as bars."""
    per_bucket: dict[str, int] = defaultdict(int)
    for row in report.operations:
        per_bucket[row.bucket] += row.count
    per_stage: dict[str, int] = defaultdict(int)
    for usage in report.llm:
        per_stage[usage.stage] += usage.prompt_tokens + usage.completion_tokens
    return {
        "operations": bars(dict(sorted(per_bucket.items()))),
        "tokens": bars(dict(sorted(per_stage.items()))),
    }


def unified_lines_from_patch(patch: str) -> list[tuple[str, str]]:
    """A unified diff's text as (css class, line) pairs, like `unified_lines`."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    return [
        (kinds.get(line[:1], "ctx"), line)
        for line in patch.splitlines()
        if not line.startswith(("---", "+++"))
    ]
