"""The model card's sections, one family per module; :mod:`trainer_scripts.model_card` renders them into the
template ``trainer_scripts/model_card.md`` and keeps their public names importable from there.

* :mod:`.reading`: the results a card is rendered from (a run's ``results.json``, an experiments folder's);
* :mod:`.names`: how the card names the model's row, encoders, datasets and local folders;
* :mod:`.metadata`: the YAML front matter (``ModelCardData``, ``model-index``);
* :mod:`.architecture`: what the model does (the Architecture paragraph, the cluster selection rule);
* :mod:`.training`: the Training data and procedure section (objectives, data, steps, hyperparameters, recipes);
* :mod:`.subnetwork`: the sparse subnetwork's share of the parameters and its pruning;
* :mod:`.tables`: the Results section (Tables IV and VI, a benchmark's table, the headline, the rules);
* :mod:`.published`: the paper's published rows and what differs from this run;
* :mod:`.experiments`: the experiments a run belongs to (its row over the seeds, the zero-shot benchmarks);
* :mod:`.figures`: the ROUGE-2 plot per DUC year;
* :mod:`.markdown`: the Markdown table the sections print their numbers in;
* :mod:`.context`: the values the template renders, gathered from the sections.
"""
