#!/usr/bin/env bash
# ZDJ Table 2's BSVM / CSVM cells on COIL2 (ours 15-16 %, published 9.71 / 9.86) and BSVM on
# g241d (ours 19.0, published 17.15) under four readings of docs/bayes_svm.md's assumptions,
# partitions 0-4, one fold job each through the pipeline's own run-fold:
#   single  one shrinkage parameter for beta_1..beta_n instead of MGG's multiple (the model's
#           "multiple shrinkage (default)" choice, taken from MGG's abstract);
#   blam    b_lambda = 100: lambda_j ~ Ga(1, 100), prior sd of beta_j about 10 sigma
#           instead of about sigma (assumption 5: a_lambda = b_lambda = 1 were not in MGG/ZDJ);
#   sig     a_sigma = 10, b_sigma = 2: a sigma^2 prior with finite mean (assumption 5; sigma^2's
#           R-hat is 1.1-1.9 at the default);
#   scale   scale_step = 0.05: the joint rescaling move that mixes sigma^2 (same posterior).
# The default reading is the pipeline's own fold files (bsvm_cells.py checks that their options
# are {}); 'default' here reruns one partition per cell to show the rerun is bit-identical.
# Measured with two chains per run: the estimators' default and the pipeline's setting until
# commit 4565e3b (its fold files then had options {}); at the current config (one chain) the
# pipeline's files have options {"n_chains": 1}, so add "n_chains":1 to every reading below
# and to bsvm_cells.py's check to repeat it against them.
# Run from a work tree whose data/ and data/splits/zhang2011 the pipeline made; results go to $1
# (bsvm_cells.py reads them). A result already in $1 is not rerun.
set -euo pipefail
out=${1:?output directory}
mkdir -p "$out"
run() {  # entry method fold tag options [--standardize]
  [ -s "$out/$1_$2_$4_$3.json" ] && return 0
  python -m gpcbench run-fold --experiment zhang2011 --entry "$1" --method "$2" --fold "$3" \
    --data "data/processed/$1.npz" --splits "data/splits/zhang2011/$1.json" \
    --output "$out/$1_$2_$4_$3.json" --options "$5" --seed 20061201 --threads 1 ${6:-}
}
readings() {  # entry method fold
  run "$1" "$2" "$3" single '{"shrinkage":"single"}' --standardize
  run "$1" "$2" "$3" blam '{"b_lambda":100}' --standardize
  run "$1" "$2" "$3" sig '{"a_sigma":10,"b_sigma":2}' --standardize
  run "$1" "$2" "$3" scale '{"scale_step":0.05}' --standardize
}
run coil2 bsvm 3 default '{}' --standardize
run coil2 csvm 3 default '{}' --standardize
for fold in 0 1 2 3 4; do
  readings coil2 bsvm "$fold"
  readings coil2 csvm "$fold"
done
run g241d bsvm 0 default '{}' --standardize
for fold in 0 1 2 3 4; do
  readings g241d bsvm "$fold"
done
