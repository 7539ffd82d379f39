from train.loop import run

run()
