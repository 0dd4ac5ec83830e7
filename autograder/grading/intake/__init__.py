"""How submissions come in, before anything runs.

bounds      what a notebook's bytes are held to before anything parses them (size, JSON depth)
roster      an instructor's roster: platform ids and names to student ids, nothing guessed
exchange    what ``nbgrader collect`` leaves (``submitted/<student>/<assignment>/`` with
            ``timestamp.txt``): the submission time read as nbgrader reads it
lms_zip     an LMS bulk download (Canvas's "Download Submissions", Moodle's "Download all
            submissions") unpacked safely into a scratch folder in nbgrader's layout
collected   a zip's notebooks kept in the course's ``submitted/`` (``grade --course``), where
            formgrader counts and opens them; of an LMS and an exchange submission the newer is
            graded, the other moved aside, never lost

The submissions themselves (``batch.find_submissions``) are found in that layout, whichever way
they came; nothing under SUBMITTED is ever written (``collected`` writes the course's
``submitted/`` only when SUBMITTED is a zip's scratch folder).
"""
