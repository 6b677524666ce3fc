#!/usr/bin/env bash
# bench/mpi_pipeline.sh - issue 14's paper target without mpirun's start-up:
# "2 ranks x 1 worker within 10% of 1 rank x 2 workers".  For each program,
# runs `stc run --profile --workers 2 P` and `mpirun -np 2 stc run --mpi
# --profile --workers 1 P` in turn (interleaved) and takes from each
# rank 0's profile its longest pipeline's wall time (the smap that does the
# work; start-up, compiling and MPI's set-up are outside it).  Prints the
# runs, their medians and the ratio 2x1 / 1x2 - 1.
#
#   bash bench/mpi_pipeline.sh [--runs N] [--build DIR] [PROGRAM.stc ...]
#
#   --runs N     runs per side, the median is reported (default 5)
#   --build DIR  the build holding stc (with MPI) (default build)
#   PROGRAM      default: the five paper benchmarks in bench/paper
#
# The machine must be quiet: 2 ranks x 1 worker and 1 x 2 both use both
# cores, and this VM has spells in which 2-thread runs take 40% longer;
# compare only figures of one run of this script.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,19s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }

runs=5 build=build progs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "mpi_pipeline.sh: unknown option $1" >&2; usage 2 >&2 ;;
        *) progs+=("$1"); shift ;;
    esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "mpi_pipeline.sh: --runs needs a whole number >= 1" >&2; exit 2; }
[ ${#progs[@]} -gt 0 ] || progs=(bench/paper/{conditional,comp_pure,comp_read,comp_write,applicative}.stc)
stc="$build/stc"
[ -x "$stc" ] || { echo "mpi_pipeline.sh: no $stc (build first: cmake -S . -B $build && cmake --build $build)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpi_pipeline.sh: no mpirun (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }

# Each mpirun gets a session directory of its own (two jobs sharing one
# can collide, as tests/mpi found).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_orte_tmpdir_base="$tmp"
mpi=(mpirun --oversubscribe -q)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)

# The longest "pipeline N: ..., W ms wall" of a profile on standard input.
longest() { sed -n 's/^pipeline [0-9]*: .*, \([0-9.]*\) ms wall.*/\1/p' | sort -g | tail -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# The time a cache line takes between the two CPUs now (bench/xcore.c): our
# VMs' 2-worker figures depend on it (bench/README.md, "Cross-core moves").
xc() { if [ -x "$build/xcore" ]; then "$build/xcore"; else echo "? (no $build/xcore)"; fi; }
echo "rank 0's longest pipeline wall (ms), medians of $runs interleaved runs; load average $(cut -d' ' -f1-3 /proc/loadavg), a cache line between CPUs $(xc) ns"
printf '%-18s %12s %12s %9s\n' program "1 x 2 w" "2 x 1 w" ratio
for p in "${progs[@]}"; do
    one=() two=()
    for _ in $(seq "$runs"); do
        a=$("$stc" run --quiet --profile --workers 2 "$p" 2>&1 >/dev/null | longest)
        b=$("${mpi[@]}" -np 2 "$stc" run --mpi --quiet --profile --workers 1 "$p" 2>&1 >/dev/null | longest)
        [ -n "$a" ] && [ -n "$b" ] || { echo "mpi_pipeline.sh: $p printed no pipeline profile" >&2; exit 1; }
        one+=("$a") two+=("$b")
    done
    m1=$(median "${one[@]}") m2=$(median "${two[@]}")
    printf '%-18s %12.1f %12.1f %+8.1f%%\n' "$(basename "$p")" "$m1" "$m2" "$(awk -v a="$m2" -v b="$m1" 'BEGIN {print (a / b - 1) * 100}')"
    echo "  runs: 1 x 2 ${one[*]}; 2 x 1 ${two[*]}"
done
echo "target (issue 14): 2 x 1 within 10% of 1 x 2"
echo "a cache line between CPUs after the runs: $(xc) ns"
