"""Imported by the local executor's fork server (``executors.WORKER_PRELOAD``): the fork server ends with the command
that started it, and so do the workers it forks (:mod:`wikiref_dataset.process.lifetime`). Importing this module anywhere
else ties that process to its parent the same way: it is meant for the fork server only."""

from wikiref_dataset.process.lifetime import die_with_parent, end_children_with_this_process

die_with_parent()
end_children_with_this_process()
