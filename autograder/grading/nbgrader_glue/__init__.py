"""Glue to plain nbgrader: its commands on the course, its preprocessors, the release.

cli       plain nbgrader commands on the course or a copy of it
plugins   nbgrader preprocessors the course's ``nbgrader_config.py`` names (hidden tests restored
          and redacted as the class grader does)
release   exercises/ from solutions/ with nbgrader generate_assignment

Beside the runs at the top of grading's stages: it may import the pages' redaction (``out.redact``)
and ``autograder.lessons``; nothing in grading imports it.
"""
