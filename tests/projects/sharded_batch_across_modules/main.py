from pipeline.export import run

run()
