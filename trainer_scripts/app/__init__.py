"""``wikiref app``: a Gradio app to try a Q-BERT model and explore a built dataset.

* :mod:`.backend`: what the app computes, without Gradio (loading a model or a dataset from a folder or a Hub id,
  summaries with every sentence's score, the side-by-side comparison with the baselines, the dataset browser), so
  that tests call it directly and the page stays a thin layer;
* :mod:`.ui`: the page (three tabs: Summarize, Compare, Explore) and :func:`.ui.serve`;
* :mod:`.space`: the files of a Hub Space that runs the same app (``push_to_hub.py --space_repo``);
* :mod:`.cli`: the ``wikiref app`` subcommand.

Gradio is the ``app`` extra (``pip install "wikiref[app]"``); nothing here imports it until the page is built.
"""
