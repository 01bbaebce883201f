"""What the three miners (WikiRef, PSG2SUM, AQuaMuSe) and the benchmark converters share: the dataset folder's
split files and card front matter (:mod:`.dataset_folder`), group-disjoint splits (:mod:`.splits`) and the datatrove
stages' bookkeeping (:mod:`.stages`)."""
