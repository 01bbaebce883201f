"""Summarize documents for a query with a Q-BERT model: `AutoModel` + the "query-focused-summarization" pipeline.

    python examples/summarize.py outputs/qbert-duc              # a folder written by the training scripts
    python examples/summarize.py org/qbert-wikiref              # a Hub copy (custom code: trust_remote_code)

One document is summarized with the WikiRef rule (sentences above the tuned threshold, no repeated trigram); several
documents with the model's cluster rule, 250 words: the rule it was fine-tuned with (`config.cluster_selection`), `ilp`
(bigram concept coverage) for the shipped encoder's `sentence-encoder` recipe, the paper's `duc` rule (rank across
documents, skip redundant sentences) for the `paper` recipe. Each summary is printed under the rule that chose it.
"""

import sys

from transformers import AutoModel, AutoProcessor, pipeline

import modeling_qbert  # registers Q-BERT and the pipeline task with transformers

QUERY = ["Urban beekeeping", "Regulation"]
DOCUMENTS = [
    "The city council voted on Tuesday to allow beehives on commercial rooftops. Under the new rule a building may "
    "keep up to four hives. Owners must register every hive with the city each spring. The vote was 7 to 2.",
    "Beekeepers in back gardens must keep hives three metres from the neighbours' fence. Honey sold at markets needs "
    "a food-safety permit. The local club runs free courses for new beekeepers every March.",
]


def main(model_path: str) -> None:
    model = AutoModel.from_pretrained(model_path, trust_remote_code=True)
    processor = AutoProcessor.from_pretrained(model_path, trust_remote_code=True)
    summarize = pipeline(modeling_qbert.TASK, model=model, processor=processor, tokenizer=processor.tokenizer)
    for documents in (DOCUMENTS[:1], DOCUMENTS):
        output = summarize(query=QUERY, documents=documents)
        print(f"{len(documents)} document(s), {output['selection']} rule:")
        for sentence in output["selected"]:
            print(f"  [{sentence['score']:.3f}] {sentence['text']}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} MODEL_FOLDER_OR_HUB_ID")
    main(sys.argv[1])
