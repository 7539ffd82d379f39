import jax

from model import evaluate, report, train

# Each module's traced call raises on its own; the first error is the program's.
errors = []
for module in (evaluate, report, train):
    try:
        module.run()
    except jax.errors.TracerArrayConversionError as error:
        errors.append(error)
assert len(errors) == 3, errors
raise errors[0]
