#!/usr/bin/env python3
"""Vendors what `scaffold check` (rule helm.values) needs to know a chart's values.

Usage: scripts/vendor-chart-values.py CHART_DIR_OR_TGZ ORIGIN [VERSION]
  CHART_DIR_OR_TGZ  an unpacked chart (holding Chart.yaml) or a chart .tgz (`helm pull`)
  ORIGIN            where it came from, recorded in the output and schemas/charts/SOURCES.md
                    (e.g. "github.com/cert-manager/cert-manager v1.21.1 deploy/charts/cert-manager")
  VERSION           the published chart version, when the source's Chart.yaml carries a
                    placeholder that the project's release sets (cert-manager v0.0.0,
                    istio 1.0.0); defaults to Chart.yaml's version
Writes schemas/charts/<name>-<version>.json:
  {"chart", "version", "origin", "values": TREE, "schema": true when values.schema.json ships}
  TREE = {KEY: 0 (a scalar, or a non-empty list) | 1 (free-form: anything below) | TREE}
  A key is free-form when its default is an empty map, an empty list or null, when it is a
  dependency (subchart) name or alias, or `global`. Paths the templates read
  (`.Values.a.b`, `index .Values "a" "b"`) that values.yaml does not list are added, their
  last key free-form; properties of values.schema.json likewise (free-form unless the
  schema closes them with additionalProperties: false).
The values.schema.json, when the chart ships one, is copied beside it as
<name>-<version>.values.schema.json.
"""
import io
import json
import re
import sys
import tarfile
from pathlib import Path

import yaml

FREE, LEAF = 1, 0


def tree_of(value):
    if isinstance(value, dict):
        if not value:
            return FREE
        return {str(k): tree_of(v) for k, v in value.items()}
    if value is None or value == [] or value == "":
        return FREE
    return LEAF


def set_free(tree, keys):
    node = tree
    for i, key in enumerate(keys):
        if not isinstance(node, dict):
            return
        if i == len(keys) - 1:
            node[key] = FREE
            return
        if key not in node:
            node[key] = {}
        node = node[key]


def add_path(tree, keys):
    node = tree
    for i, key in enumerate(keys):
        if not isinstance(node, dict):
            return
        last = i == len(keys) - 1
        if key not in node:
            node[key] = FREE if last else {}
        elif node[key] == LEAF and not last:
            return
        node = node[key]


def add_schema(tree, schema):
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return
    for key, sub in props.items():
        if key not in tree:
            tree[key] = FREE
        if isinstance(tree[key], dict) and isinstance(sub, dict):
            add_schema(tree[key], sub)


ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
# An action passing a value whole (toYaml, tpl, range, with, merge...) accepts any keys below it.
WHOLE = re.compile(r"\b(toYaml|toJson|toPrettyJson|tpl|range|with|merge|mergeOverwrite|include|keys|omit|pick|dict|deepCopy)\b")
VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
INDEX_REF = re.compile(r'index\s+\.Values((?:\s+"[^"]+")+)')


class Chart:
    """The files of a chart directory or tarball, by path relative to the chart root."""

    def __init__(self, path: Path):
        self.files = {}
        if path.is_dir():
            for f in path.rglob("*"):
                if f.is_file():
                    self.files[str(f.relative_to(path))] = f.read_bytes()
        else:
            with tarfile.open(path) as tar:
                for m in tar.getmembers():
                    if m.isfile():
                        # drop the top directory (`cert-manager/...`)
                        rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                        self.files[rel] = tar.extractfile(m).read()

    def text(self, rel):
        data = self.files.get(rel)
        return data.decode("utf-8") if data is not None else None


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    chart = Chart(Path(sys.argv[1]))
    origin = sys.argv[2]
    meta = yaml.safe_load(chart.text("Chart.yaml"))
    values = yaml.safe_load(chart.text("values.yaml") or "") or {}
    tree = tree_of(values)
    if tree == FREE:
        tree = {}
    for rel, data in chart.files.items():
        if not rel.startswith("templates/"):
            continue
        text = data.decode("utf-8", errors="replace")
        for m in VALUES_REF.finditer(text):
            add_path(tree, m.group(1).strip(".").split("."))
        for m in INDEX_REF.finditer(text):
            add_path(tree, re.findall(r'"([^"]+)"', m.group(1)))
        for action in ACTION.finditer(text):
            if WHOLE.search(action.group(1)):
                for m in VALUES_REF.finditer(action.group(1)):
                    set_free(tree, m.group(1).strip(".").split("."))
    schema_text = chart.text("values.schema.json")
    if schema_text:
        add_schema(tree, json.loads(schema_text))
    for dep in meta.get("dependencies") or []:
        tree[dep.get("alias") or dep["name"]] = FREE
    tree["global"] = FREE
    out_dir = Path(__file__).resolve().parent.parent / "schemas" / "charts"
    out_dir.mkdir(parents=True, exist_ok=True)
    name = meta["name"]
    version = sys.argv[3] if len(sys.argv) == 4 else str(meta["version"])
    out = {
        "chart": name,
        "version": version,
        "origin": origin,
        "values": tree,
        "schema": bool(schema_text),
    }
    path = out_dir / f"{name}-{version}.json"
    path.write_text(json.dumps(out, separators=(",", ":"), sort_keys=True) + "\n")
    if schema_text:
        (out_dir / f"{name}-{version}.values.schema.json").write_text(schema_text)
    print(f"{path}: {path.stat().st_size} bytes{' + values.schema.json' if schema_text else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
