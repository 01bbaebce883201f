"""Load a WikiRef folder (written by `wikiref build` / `make demo`) or a Hub copy with `datasets.load_dataset`.

    python examples/load_wikiref.py outputs/wikiref          # a local folder
    python examples/load_wikiref.py org/wikiref              # the same, pushed to the Hub

Each row is one query-focused summarization example: `query` (article title, then section headings), `document`
(the cited web page, as sentences), `summary` (the Wikipedia statement) and the oracle labels for training.
"""

import sys

import datasets


def main(path: str) -> None:
    wikiref = datasets.load_dataset(path)
    print(wikiref)
    example = wikiref["train"][0]
    print("query:   ", " > ".join(example["query"]))
    print("summary: ", example["summary"])
    print("document:", len(example["document"]), "sentences from", example["url"])
    oracle = [sentence for sentence, label in zip(example["document"], example["oracle_label"]) if label]
    print("oracle sentences:")
    for sentence in oracle:
        print("  -", sentence)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} WIKIREF_FOLDER_OR_HUB_ID")
    main(sys.argv[1])
