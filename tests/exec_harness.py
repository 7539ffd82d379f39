"""Executes snapshot cases with the real libraries, in one process per batch.

Run as ``python exec_harness.py SPEC.json``: SPEC lists {"id", "source"} entries; each
source runs as ``__main__`` in a fresh namespace and the outcome (ok, or the raised
exception's type and message) is printed as one JSON list on stdout.
"""

import json
import sys
import traceback


def run_case(source: str, name: str) -> dict:
    namespace = {"__name__": "__main__", "__file__": name}
    try:
        exec(compile(source, name, "exec"), namespace)  # noqa: S102 - running the case is the test
    except BaseException as error:  # noqa: BLE001 - the outcome under test, whatever it is
        chain = []
        current = error
        while current is not None:
            chain.append(type(current).__name__)
            current = current.__cause__ or current.__context__
        return {
            "ok": False,
            "type": type(error).__name__,
            "chain": chain,
            "message": str(error)[:2000],
            "traceback": traceback.format_exc()[-4000:],
        }
    return {"ok": True}


def main() -> None:
    import os

    if os.environ.get("CODEMOD_EXEC_SIMULATE"):  # the simulated TPU (tests/platform_sim.py)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import platform_sim

        platform_sim.activate(os.environ["CODEMOD_EXEC_SIMULATE"])
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    outcomes = [run_case(entry["source"], entry["id"]) for entry in spec]
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main()
