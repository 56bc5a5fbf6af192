#!/usr/bin/env python3
"""Vendors the compact Terraform provider schemas `scaffold check` (rule tf.schema) reads.

Input: the compact schemas the shared validator builds from the prebuilt CDK Terrain/CDKTF
provider bindings (`python -m platform_validate.tfschema build`, which reads the jsii
assemblies generated from `terraform providers schema -json`), in
${VALIDATE_HOME:-~/.cache/platform-validate}/tf-schemas/<provider>-<version>.json.
Output: schemas/terraform/<provider>-<version>.txt, names only, one line per block so
that check parses only the types a repo uses:
  line 1: {"provider", "source", "version", "from"}
  then:   `provider <provider> BLOCK`, `resource TYPE BLOCK`, `data TYPE BLOCK` (sorted)
  BLOCK = {"a": [argument names], "l": [list-of-object arguments, may be written as blocks],
           "b": {BLOCK_TYPE: BLOCK}, "x": [opaque blocks: anything inside],
           "i": 1 when the bindings left a name uncertain (unknown names are not reported)}
Usage: scripts/vendor-tf-schemas.py PROVIDER-VERSION... (e.g. aws-6.69.1 kubernetes-3.4.0)
"""
import json
import os
import sys
from pathlib import Path


def block(raw: dict) -> dict:
    out: dict = {}
    attrs = raw.get("a", {})
    out["a"] = sorted(n for n, code in attrs.items() if code[1:] != "L")
    lists = sorted(n for n, code in attrs.items() if code[1:] == "L")
    if lists:
        out["l"] = lists
    blocks, opaque = {}, []
    for name, (code, inner) in raw.get("b", {}).items():
        if code.endswith("x"):
            opaque.append(name)
        else:
            blocks[name] = block(inner)
    if blocks:
        out["b"] = blocks
    if opaque:
        out["x"] = sorted(opaque)
    if raw.get("i"):
        out["i"] = 1
    return out


def main() -> int:
    home = Path(os.environ.get("VALIDATE_HOME", Path.home() / ".cache/platform-validate"))
    out_dir = Path(__file__).resolve().parent.parent / "schemas" / "terraform"
    out_dir.mkdir(parents=True, exist_ok=True)
    for label in sys.argv[1:]:
        raw = json.loads((home / "tf-schemas" / f"{label}.json").read_text())
        header = {k: raw[k] for k in ("provider", "source", "version", "from")}
        dump = lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True)
        lines = [dump(header)]
        lines.append(f"provider {raw['provider']} {dump(block(raw.get('provider_config', {})))}")
        for kind in ("resource", "data"):
            for name, body in sorted(raw.get(kind, {}).items()):
                lines.append(f"{kind} {name} {dump(block(body))}")
        path = out_dir / f"{label}.txt"
        path.write_text("\n".join(lines) + "\n")
        print(f"{path}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
