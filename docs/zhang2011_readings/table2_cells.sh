#!/usr/bin/env bash
# ZDJ Table 2's flagged cells (COIL2 FBGKM, Letters A-B FBGKM, Digit1 SGPC) under two readings,
# partitions 0-4, one fold job each through the pipeline's own run-fold: ZDJ eq. 10's prior on
# gamma ('beta'), and the inputs left unstandardised ('raw'). Run from a work tree whose data/
# and data/splits/zhang2011 the pipeline made; results go to $1 (table2_cells.py reads them).
set -euo pipefail
out=${1:?output directory}
mkdir -p "$out"
run() {  # entry method fold tag options [--standardize]
  python -m gpcbench run-fold --experiment zhang2011 --entry "$1" --method "$2" --fold "$3" \
    --data "data/processed/$1.npz" --splits "data/splits/zhang2011/$1.json" \
    --output "$out/$1_$2_$4_$3.json" --options "$5" --seed 20061201 --threads 1 ${6:-}
}
for fold in 0 1 2 3 4; do
  run coil2 fbgkm "$fold" beta '{"gamma_prior":"beta_binomial"}' --standardize
  run coil2 fbgkm "$fold" raw '{}'
  run letters_ab fbgkm "$fold" beta '{"k_max":100,"gamma_prior":"beta_binomial"}' --standardize
  run letters_ab fbgkm "$fold" raw '{"k_max":100}'
  run digit1 sgpc "$fold" beta '{"gamma_prior":"beta_binomial"}' --standardize
  run digit1 sgpc "$fold" raw '{}'
done
