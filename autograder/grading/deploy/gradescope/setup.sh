#!/usr/bin/env bash
# Gradescope's setup.sh (runs once, as root, when Gradescope builds the autograder's image). The
# autograder zip holds, at its root, this file and run_autograder (copies of the two in this
# folder), the course repository in a folder `course/`, refs.json (`python -m autograder
# references --out refs.json`) and a file assignment_id naming the assignment (ex01_graph, ...).
set -euo pipefail
source="${GRADESCOPE_ROOT:-/autograder}/source"
cp -a "$source/refs.json" "$source/assignment_id" "$source/course/"
"$source/course/course" setup
