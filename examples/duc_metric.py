"""Score summaries with the DUC metric through `evaluate`: ROUGE-1.5.5 with the official DUC settings
(-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250), offline.

    python examples/duc_metric.py

`evaluate.load(DUC_ROUGE_PATH)` loads the module shipped with the package; after `push_to_hub.py --metric_repo
org/duc_rouge` others can `evaluate.load("org/duc_rouge")` (the Space carries the ROUGE engine). Options of ROUGE-1.5.5 can be
changed per call with `rouge_args`.
"""

import evaluate

from wikiref_dataset.metrics import DUC_ROUGE_PATH

predictions = [
    "The council allowed rooftop hives.\nEach building may keep four hives.",
    "Garden hives must stand three metres from the fence.",
]
references = [
    ["The city council voted to allow beehives on commercial rooftops, up to four per building.",
     "Rooftop beekeeping is now legal; a building can keep at most four hives."],
    ["Hives in back gardens must be at least three metres from the neighbours' fence."],
]

metric = evaluate.load(DUC_ROUGE_PATH)
scores = metric.compute(predictions=predictions, references=references)
for name in ("rouge_1", "rouge_2", "rouge_su4"):
    print(f"{name}: recall {scores[f'{name}_recall']:.5f} "
          f"(95% CI {scores[f'{name}_recall_ci_low']:.5f}-{scores[f'{name}_recall_ci_high']:.5f})")
