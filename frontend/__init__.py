"""Building IR: tracing Python functions over symbolic Tensors into StableHLO modules."""
