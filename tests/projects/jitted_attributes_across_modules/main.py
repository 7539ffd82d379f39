from pkg.train import run

run()
