#!/usr/bin/env bash
# K&G Table 4's GPC-L(m,soft) and GPC-VL / GPC-VU(m,soft) rows under other readings of the
# protocol, all 10 folds, one fold job each through the pipeline's own run-fold:
#   GPC-L, every data set of Tables 4-5: W&B's N(-3, 3^2) prior on the log hyperparameters
#     ('prior', the default before the config chose maximum likelihood); Heart also with the
#     inputs left unstandardised ('raw'; the published 1-NN / k-NN errors match raw inputs).
#   GPC-VL / VU, Ionosphere: 'raw'; one shared inverse lengthscale instead of ARD ('iso');
#     the bound's optimiser stopped after one iteration ('early').
# Run from a work tree whose data/ and data/splits/kim2006_binary the pipeline made; results
# go to $1 (table4_cells.py reads them).
set -euo pipefail
out=${1:?output directory}
mkdir -p "$out"
run() {  # entry method fold tag options [extra run-fold arguments]
  local entry=$1 method=$2 fold=$3 tag=$4 options=$5
  shift 5
  python -m gpcbench run-fold --experiment kim2006_binary --entry "$entry" --method "$method" \
    --fold "$fold" --data "data/processed/$entry.npz" \
    --splits "data/splits/kim2006_binary/$entry.json" \
    --output "$out/${entry}_${method}_${tag}_$fold.json" --options "$options" \
    --seed 20061201 --threads 1 "$@"
}
for fold in $(seq 0 9); do
  for entry in heart thyroid ionosphere crabs pima_tr boston; do
    run "$entry" gpc-l-m-soft "$fold" prior '{"prior_sd":3.0}' --standardize
  done
  run heart gpc-l-m-soft "$fold" raw '{"prior_sd":null}'
  for tag in raw iso early; do
    case $tag in
      raw) options='{}' standardize=() ;;
      iso) options='{"ard":false}' standardize=(--standardize) ;;
      early) options='{"max_iter":1}' standardize=(--standardize) ;;
    esac
    run ionosphere gpc-vl-m-soft "$fold" "$tag" "$options" "${standardize[@]}"
    run ionosphere gpc-vu-m-soft "$fold" "$tag" '{}' "${standardize[@]}" \
      --upstream "gpc-vl-m-soft/fold$fold=$out/ionosphere_gpc-vl-m-soft_${tag}_$fold.json"
  done
done
