# Readings: measurements the tables' notes quote (gpcbench.experiments.readings), each run as
# a target with its seed from the config's `readings`. The code hash param reruns a reading
# when its module or a gpcbench module it imports changes; the output records the hash, so a
# report built from an older output marks the notes quoting it stale.

from gpcbench.experiments.readings import reading_code_hash, reading_inputs
from gpcbench.workflow import one_of


rule reading:
    input:
        lambda w: reading_inputs(w.reading),
    output:
        "reports/readings/{reading}.json",
    wildcard_constraints:
        reading=one_of(READINGS_RUN),
    log:
        "logs/readings/{reading}.log",
    params:
        seed=lambda w: READINGS_RUN[w.reading]["seed"],
        code=lambda w: reading_code_hash(w.reading),
    shell:
        "{GPCBENCH} reading {wildcards.reading} {output} --seed {params.seed} 2> {log}"
