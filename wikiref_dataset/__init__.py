"""WikiRef toolkit: the data side (text pipeline, ROUGE, oracle, dataset builders)."""
