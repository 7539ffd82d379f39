"""String comparisons with no certain fix: a literal that is no release of digits, a chained
comparison, and one spread over lines. Reported, left as they are."""
import jax

release_candidate = jax.__version__ >= "0.4.30rc1"
window = "0.4" <= jax.__version__ < "0.7"
spread = (
    jax.__version__
    >= "0.6"
)
