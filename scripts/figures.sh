#!/usr/bin/env bash
# Regenerate the gallery: docs/figures/NAME.png from docs/figures/data/NAME.csv, each drawn
# by `apusim plot` (the figure type of the study named in the CSV; see
# crates/apusim-sweep/src/plot/study.rs). Takes a few seconds.
#
#   scripts/figures.sh           redraw every PNG from the committed CSVs
#   scripts/figures.sh --rerun   first run the studies again into docs/figures/data/ (the
#                                commands below; about 3.6 hours on two cores, the times
#                                beside each one measured on two shared cores; the gspc
#                                figures after gspc-fig12 find its rendered scenes in the
#                                trace cache), then redraw
#
# The CSVs are the long format of `apusim study ... --csv`
# (study,config,workload,policy,metric,value); the numbers are those of docs/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."

rerun=false
case "${1:-}" in
    "") ;;
    --rerun) rerun=true ;;
    *)
        echo "usage: scripts/figures.sh [--rerun]" >&2
        exit 2
        ;;
esac

cargo build --release --locked --bin apusim
bin="${CARGO_TARGET_DIR:-target}/release/apusim"
data=docs/figures/data

# NAME|study and options (each figure's section in docs/results.md names them)|seconds
runs=(
    "gspc-fig15|gspc-fig15|855"
    "gspc-fig16|gspc-fig16|883"
    "gspc-fig17|gspc-fig17|1156"
    "crit-fig13|crit-fig13 --mixes HL3 --set timing.render.target_fps=0|120"
    "crit-fig13-scale3|crit-fig13 --mixes HL3 --set timing.render.target_fps=0 --scale 3 --instructions 1000000|509"
    "crit-fig15|crit-fig15 --mixes HL16,HL20|112"
    "tap-fig2|tap-fig2 --instructions 500000|294"
    "tap-fig8|tap-fig8|137"
    "tap-fig8-scale4|tap-fig8 --scale 4|378"
    "tap-fig9|tap-fig9|547"
    "tap-fig10|tap-fig10|434"
    "tap-fig11|tap-fig11|642"
    "tap-fig12|tap-fig12|243"
    "tap-fig12-scale4|tap-fig12 --scale 4|888"
    "tap-table1-scale4|tap-table1 --scale 4|278"
    "bypass-fig2|bypass-fig2|790"
    "bypass-fig9|bypass-fig9|907"
    "bypass-fig10|bypass-fig10|267"
    "bypass-fig12|bypass-fig12|5"
    "bypass-fig1|bypass-fig1|7"
    "bypass-fig6|bypass-fig6|8"
    "bypass-fig7|bypass-fig7|15"
    "bypass-fig8|bypass-fig8|16"
    "bypass-fig11|bypass-fig11|5"
    "bypass-nw|bypass-nw|1"
    "gspc-fig12|gspc-fig12|108"
    "gspc-fig11|gspc-fig11|17"
    "gspc-fig13|gspc-fig13|60"
    "gspc-fig14|gspc-fig14|18"
    "gspc-counters|gspc-counters|7"
    "drp-fig14|drp-fig14|646"
    "drp-fig13|drp-fig13|260"
    "drp-fig14-noninclusive|drp-fig14 --set llc.cpu_inclusive=false --set llc.l2_hit_hints=false|578"
    "crit-fig2|crit-fig2 --mixes HL3,HL9|22"
    "crit-fig3|crit-fig3 --mixes HL3,HL9|92"
    "crit-fig4|crit-fig4 --mixes HL3|29"
    "crit-fig8|crit-fig8 --mixes HL3,HL9|49"
    "crit-fig9|crit-fig9 --mixes HL1,HL2,HL3,HL4,HL5,HL6,HL9,HL14|109"
    "crit-fig10|crit-fig10 --mixes H3,HL9 --instructions 1000000|190"
    "crit-fig11|crit-fig11 --mixes HL3,HL9|160"
    "crit-fig12|crit-fig12 --mixes HL3|69"
    "crit-fig14|crit-fig14 --mixes HL3,HL9|126"
    "drp-table4|drp-table4 --instructions 1000000|11"
    "drp-fig1|drp-fig1 --mixes S1,D1,Q1,S3,D3,Q3 --instructions 1000000|209"
    "drp-fig11|drp-fig11 --mixes S1,S3 --instructions 1000000|109"
    "drp-fig12|drp-fig12 --mixes S1,S3 --instructions 1000000|60"
    "drp-fig15|drp-fig15 --mixes S1,S3 --instructions 1000000|83"
    "tap-fig6|tap-fig6|78"
    "tap-fig7|tap-fig7|51"
    "drp-fig3|drp-fig3 --mixes S1 --instructions 1000000|40"
    "drp-fig4|drp-fig4 --mixes S1,S3 --instructions 1000000|228"
)

if $rerun; then
    for r in "${runs[@]}"; do
        IFS='|' read -r name cmd secs <<<"$r"
        echo "== apusim study $cmd (about $secs s)" >&2
        # shellcheck disable=SC2086 # the options are words
        "$bin" study $cmd --csv "$data/$name.csv" >/dev/null
    done
fi

shopt -s nullglob
csvs=("$data"/*.csv)
if [ ${#csvs[@]} -eq 0 ]; then
    echo "no CSV in $data" >&2
    exit 1
fi
for csv in "${csvs[@]}"; do
    name=$(basename "$csv" .csv)
    "$bin" plot "$csv" -o "docs/figures/$name.png"
done
