"""How submissions come in, before anything runs.

exchange    what ``nbgrader collect`` leaves (``submitted/<student>/<assignment>/`` with
            ``timestamp.txt``): the submission time read as nbgrader reads it
lms_zip     an LMS bulk download (Canvas's "Download Submissions", Moodle's "Download all
            submissions") unpacked safely into a scratch folder in nbgrader's layout

The submissions themselves (``batch.find_submissions``) are found in that layout, whichever way
they came; nothing under SUBMITTED is ever written.
"""
