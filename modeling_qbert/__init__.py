"""Q-BERT: the model side (configuration, model, processor, selection, trainer)."""
