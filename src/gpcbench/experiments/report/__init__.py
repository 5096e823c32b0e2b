"""reports/: the papers' tables beside the published numbers, summaries, figures, index.

Every output is a pure function of the fold results, the config and ``config/published``:
:mod:`.cells` computes a table's numbers, :mod:`.figure_data` what a figure shows,
:mod:`.formats` and :mod:`.figures` write them, :mod:`.index` names the output groups and
writes the overview, and :mod:`.build` (``gpcbench report``) reads the inputs and runs one
group or all.
"""
