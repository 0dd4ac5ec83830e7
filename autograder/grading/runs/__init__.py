"""Runs: a whole class, one notebook for a hosted grader, and a class split across machines.

batch             a whole class in parallel, each result recorded in the store as it finishes
warm              grading threads with warm sandboxes and references, kept between calls (batch, service)
progress          the progress bar of a class run
shards            a class split into shards (``--shard K/N``) and where each shard records
merge             shards' part gradebooks merged into one
saved_references  each solution run once, its records saved (``refs.json``) for many runs
hosted            one notebook for Gradescope or PrairieLearn (their results.json)
demo              a demo class of correct, blank and typical-mistake submissions (``grading.mistakes``)

Above every stage but the service: it may import every stage below it (intake, sandbox, judge, store,
out); only the service (``grading.service``) and the commands (``autograder.commands``) import it.
"""
