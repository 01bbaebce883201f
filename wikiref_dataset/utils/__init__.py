"""Small helpers every part of the data side uses: batching, JSON-lines reading, a directory walk that survives
unreadable folders, bounded-memory sorting and running statistics, and the formatting of times and sizes. Nothing
here imports another module of the project."""
