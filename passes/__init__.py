"""Pattern-rewrite passes over StableHLO modules."""
