#!/usr/bin/env bash
# K&G Table 4's flagged GPC-L(m,soft) Heart and GPC-VL / GPC-VU(m,soft) Ionosphere cells under
# two readings of the protocol, all 10 folds, one fold job each through the pipeline's own
# run-fold: inputs left unstandardised ('raw'; the published 1-NN / k-NN errors match raw
# inputs) and one shared inverse lengthscale instead of ARD ('iso'). Run from a work tree whose
# data/ and data/splits/kim2006_binary the pipeline made; results go to $1 (table4_cells.py
# reads them).
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
  run heart gpc-l-m-soft "$fold" raw '{}'
  run heart gpc-l-m-soft "$fold" iso '{"ard":false}' --standardize
  for tag in raw iso; do
    options='{}' standardize=()
    [ "$tag" = iso ] && options='{"ard":false}' standardize=(--standardize)
    run ionosphere gpc-vl-m-soft "$fold" "$tag" "$options" "${standardize[@]}"
    run ionosphere gpc-vu-m-soft "$fold" "$tag" "$options" "${standardize[@]}" \
      --upstream "gpc-vl-m-soft/fold$fold=$out/ionosphere_gpc-vl-m-soft_${tag}_$fold.json"
  done
done
