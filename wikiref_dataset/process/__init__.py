"""Process control for the builds: the datatrove executors (local, Slurm chain, Ray) and their shared options, the
console switch, Slurm queue queries, folder locks, process lifetimes (children end with their parent, Ctrl-C),
disk-full detection, and the safe output folders every build publishes through."""
