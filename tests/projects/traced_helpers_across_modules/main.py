from model.train import run

# Every traced path raises in the trace; each one is tried, and the first error is the program's.
errors = []
for which in ("step", "total", "logged", "compiled", "mapped", "partial", "tree", "alias", "normalized", "forward"):
    try:
        run(which)
    except Exception as error:  # noqa: BLE001 - collected, re-raised below
        errors.append(error)
assert len(errors) == 10, f"only {len(errors)} of the 10 traced paths raised"
raise errors[0]
