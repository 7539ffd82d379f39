from interop import convert


def summarize(values):
    # Hands its parameter on: the export is in another module still.
    host = convert.to_numpy(values)
    return float(host.sum())
