"""pytest's set-up for the whole repository (nbval's lesson runs included).

A lesson's slow cell (lesson 13's Inductor compilation, about a minute) runs under Run All only when the
learner sets its flag; the tests set ``COURSE_SLOW_CELLS=1`` so that nbval runs and checks it all the same.
"""

import os

os.environ.setdefault("COURSE_SLOW_CELLS", "1")
