"""The sandbox and what crosses its boundary: where a submission's code runs, and how its results come back.

container   a bubblewrap container around a warm fork server, seen from the grader (``Sandbox``)
forkserver  the fork server inside the container, and the submission process it forks
scratch     the temporary folders a submission writes to, emptied after each notebook
runner      run a notebook's cells, one at a time, in a fresh submission process
boundary    what comes back from a submission process: read with a deadline and a size limit, checked
values      checked values and records as plain JSON (how they cross back)
limits      the limits a submission runs under (one object, from the command line down)
cgroups     as root, the pids and memory cgroups that bound a container's processes together
ipc         System V objects and keyrings a submission leaves behind, removed

It may import ``grading.status`` and, of the package, only what a record is made of
(``autograder.check.checked``); the fork server imports nothing heavier than the standard library
before it forks, and never a solution, a reference or the store. Everything above it (judging,
runs) imports it; it imports none of them.
"""
