from train.consume import run

run()
