"""How submissions come in, before anything runs.

exchange    what ``nbgrader collect`` leaves (``submitted/<student>/<assignment>/`` with
            ``timestamp.txt``): the submission time read as nbgrader reads it
lms_zip     an LMS bulk download (Canvas's "Download Submissions", Moodle's "Download all
            submissions") unpacked safely into a scratch folder in nbgrader's layout
collected   a zip's notebooks kept in the course's ``submitted/`` (``grade --course``), where
            formgrader counts and opens them; an earlier one there is moved aside, never lost

The submissions themselves (``batch.find_submissions``) are found in that layout, whichever way
they came; nothing under SUBMITTED is ever written (``collected`` writes the course's
``submitted/`` only when SUBMITTED is a zip's scratch folder).
"""
