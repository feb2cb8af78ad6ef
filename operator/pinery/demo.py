"""`make demo`: what pinery can show on a laptop today.

Validates the examples with `pinery validate` and prints the generated CRDs' printer columns
and validation rules. (Local mode will turn this into a full operator demo.)
"""

from __future__ import annotations

import sys
from pathlib import Path

from pinery.api import RESOURCES
from pinery.crds import build_crd
from pinery.validation import validate_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def main() -> int:
    print("pinery demo: validating the examples with the generated CRD schemas\n")
    failed = 0
    for path in sorted(EXAMPLES.glob("*.yaml")):
        problems, valid = validate_text(path.read_text())
        for kind, name in valid:
            print(f"  ok    {path.name}: {kind}/{name}")
        for problem in problems:
            print(f"  FAIL  {path.name}: {problem}")
        failed += len(problems)
    print()
    for res in RESOURCES:
        crd = build_crd(res)
        version = crd["spec"]["versions"][0]
        columns = ", ".join(c["name"] for c in version["additionalPrinterColumns"])
        print(f"{res.kind} ({res.crd_name}): kubectl get {res.plural} shows {columns}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
