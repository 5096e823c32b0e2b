#!/usr/bin/env bash
# ZDJ Table 10's inputs: the sets of secs. 5.3-5.4 run on unstandardised inputs ('raw'), against
# the standardised default of sec. 5.2's nine sets, partitions 0-2, one fold job each through the
# pipeline's own run-fold. Run from a work tree whose data/ and data/splits/zhang2011 the
# pipeline made; results go to $1 (table10_inputs.py reads them).
set -euo pipefail
out=${1:?output directory}
mkdir -p "$out"
run() {  # entry data method fold options
  python -m gpcbench run-fold --experiment zhang2011 --entry "$1" --method "$3" --fold "$4" \
    --data "data/processed/$2.npz" --splits "data/splits/zhang2011/$1.json" \
    --output "$out/$1_$3_fold$4.json" --options "$5" --seed 20061201 --threads 1
}
for fold in 0 1 2; do
  for method in fbgkm sgpc sgp-fic-mcmc; do
    run adult1 adult "$method" "$fold" '{"n_chains": 1}'
    run astroparticle astroparticle "$method" "$fold" '{"n_chains": 1}'
  done
  run adult1 adult sgp-fic-ep "$fold" '{}'
  run astroparticle astroparticle svm-cv-soft "$fold" '{}'
done
