#!/usr/bin/env python3
"""Refresh schemas/ from a copy of shared/schemas (see schemas/SOURCES.md).

Each CRD's openAPIV3Schema per version, and the Kubernetes definitions, are kept with
their `description`s removed (the validator never reads them; they are 80% of the bytes)
and written as compact JSON: schemas/crds/<group>.json and schemas/kubernetes.json.
    scripts/vendor-schemas.py ../shared/schemas
"""
import glob
import json
import os
import sys

import yaml

source = sys.argv[1] if len(sys.argv) > 1 else "../shared/schemas"
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas")


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "description"}
    if isinstance(x, list):
        return [strip(i) for i in x]
    return x


groups = {}
for path in sorted(glob.glob(os.path.join(source, "crds", "*", "*.yaml"))):
    crd = yaml.safe_load(open(path))
    spec = crd["spec"]
    kinds = groups.setdefault(spec["group"], {})
    kinds[spec["names"]["kind"]] = {
        "source": os.path.relpath(path, source),
        "scope": spec.get("scope", "Namespaced"),
        "versions": {
            v["name"]: {
                "served": v.get("served", True),
                "deprecated": v.get("deprecated", False),
                "schema": strip(v.get("schema", {}).get("openAPIV3Schema", {})),
            }
            for v in spec["versions"]
        },
    }
os.makedirs(os.path.join(here, "crds"), exist_ok=True)
for group, kinds in groups.items():
    with open(os.path.join(here, "crds", group + ".json"), "w") as out:
        json.dump(kinds, out, separators=(",", ":"), sort_keys=True)

# The Kubernetes definitions: an index of the kinds (group/version/Kind -> definition) and
# each definition as a JSON *string*, so that `check` scans the file quickly and parses only
# the definitions an object needs.
defs_file = glob.glob(os.path.join(source, "kubernetes", "*", "_definitions.json"))[0]
defs = strip(json.load(open(defs_file)))["$defs"]
kinds = {}
for name, definition in defs.items():
    for gvk in definition.get("x-kubernetes-group-version-kind", []):
        group = gvk["group"]
        key = (group + "/" if group else "") + gvk["version"] + "/" + gvk["kind"]
        kinds[key] = name
with open(os.path.join(here, "kubernetes.json"), "w") as out:
    json.dump(
        {
            "kinds": kinds,
            "defs": {n: json.dumps(d, separators=(",", ":"), sort_keys=True) for n, d in defs.items()},
        },
        out,
        separators=(",", ":"),
        sort_keys=True,
    )
