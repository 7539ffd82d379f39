from train.evaluate import evaluate
from train.loop import run

run()
assert evaluate() == 28.0
