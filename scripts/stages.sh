# Stage bookkeeping, sourced by scripts/test: `stage NAME WHAT` ends the running stage,
# says in one line what the next one does (and where its time goes), and starts its
# clock; `stages_summary`, run at exit, prints each stage's elapsed seconds and the CPU
# seconds its processes used, so a long run says where the time went (and, when it
# failed, in which stage). On a shared machine the wall clock grows with the others'
# load, the CPU seconds do not: the table says the load average at the start and end.
# `stage_background NAME WHAT COMMAND...` starts a job beside the stages that
# follow (its output kept in build/stages/NAME.log) and `stage_wait NAME` waits for it
# between two stages, prints its output and adds its own wall and CPU seconds to the
# table; the table's total is then the elapsed time, less than the sum of its rows. A
# background job's CPU reaches this shell's count when bash reaps it, whichever stage is
# running then: that stage's row leaves it out (it is the job's own row), so no CPU is
# counted twice (it was: mypyc's 162 s also showed in the pure run's row).
# `worker_ends TIMINGS` says when each xdist worker of a stage ended its last test.
# shellcheck shell=bash
_STAGE_NAMES=()
_STAGE_SECONDS=()
_STAGE_CPU=()
_STAGE_NAME=""
_STAGE_START=0
_STAGE_CPU_START=0
_STAGE_LOAD_START=""
_STAGE_CLOCK_START=$SECONDS
declare -A _STAGE_BG_PID=()
declare -A _STAGE_BG_TIME=()
declare -A _STAGE_BG_OPEN=()

# CPU seconds used by this shell's finished children (user + system, from /proc; 0
# where there is none).
_stage_cpu() {
  _stage_cpu_of $$
}

_stage_cpu_of() {
  awk -v tck="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
    '{ sub(/^.*\) /, ""); print int(($14 + $15) / tck) }' "/proc/$1/stat" 2>/dev/null || echo 0
}

_stage_load() {
  cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"
}

# Take the CPU of the background jobs that bash has reaped since the last look out of the
# running stage's count (a job's .time file has its CPU; kill -0 fails once it is reaped).
_stage_discount_background() {
  local name wall cpu status
  for name in "${!_STAGE_BG_OPEN[@]}"; do
    if ! kill -0 "${_STAGE_BG_PID[$name]}" 2>/dev/null; then
      read -r wall cpu status <"${_STAGE_BG_TIME[$name]}" 2>/dev/null || cpu=0
      _STAGE_CPU_START=$((_STAGE_CPU_START + cpu))
      unset "_STAGE_BG_OPEN[$name]"
    fi
  done
}

_stage_end() {
  _stage_discount_background
  if [ -n "$_STAGE_NAME" ]; then
    _STAGE_NAMES+=("$_STAGE_NAME")
    _STAGE_SECONDS+=("$((SECONDS - _STAGE_START))")
    _STAGE_CPU+=("$(($(_stage_cpu) - _STAGE_CPU_START))")
    _STAGE_NAME=""
  fi
}

# stage NAME WHAT: one line before the stage starts.
stage() {
  _stage_end
  _STAGE_NAME=$1
  _STAGE_START=$SECONDS
  _STAGE_CPU_START=$(_stage_cpu)
  [ -n "$_STAGE_LOAD_START" ] || _STAGE_LOAD_START=$(_stage_load)
  echo "== $1: $2"
}

# stage_background NAME WHAT COMMAND...: run COMMAND from now on, beside what follows.
stage_background() {
  local name=$1 what=$2
  shift 2
  mkdir -p build/stages
  rm -f "build/stages/$name.time"
  echo "== $name (in the background from here): $what"
  (
    local start=$SECONDS status=0 me=$BASHPID
    "$@" >"build/stages/$name.log" 2>&1 || status=$?
    # This subshell's children's CPU, read before it exits ($BASHPID: not $(...)'s own).
    echo "$((SECONDS - start)) $(_stage_cpu_of "$me") $status" >"build/stages/$name.time"
    exit "$status"
  ) &
  _STAGE_BG_PID[$name]=$!
  _STAGE_BG_TIME[$name]=$PWD/build/stages/$name.time
  _STAGE_BG_OPEN[$name]=1
}

# stage_wait NAME: end the running stage, wait for NAME, print its output; its status.
stage_wait() {
  local name=$1 wall cpu status
  _stage_end
  echo "== waiting for $name"
  wait "${_STAGE_BG_PID[$name]}" || true
  unset "_STAGE_BG_PID[$name]" "_STAGE_BG_OPEN[$name]"
  cat "build/stages/$name.log"
  read -r wall cpu status <"${_STAGE_BG_TIME[$name]}" || { wall=0 cpu=0 status=1; }
  _STAGE_NAMES+=("$name")
  _STAGE_SECONDS+=("$wall")
  _STAGE_CPU+=("$cpu")
  # Its CPU reached this shell's children's count by now (reaped here, or earlier and
  # taken out of the stage then): not the next stage's.
  _STAGE_CPU_START=$(_stage_cpu)
  if [ "$status" -ne 0 ]; then
    _STAGE_NAME=$name
    return "$status"
  fi
}

# The table of stage: wall seconds, CPU seconds; keeps the exit status it was called with.
stages_summary() {
  local status=$? failed=$_STAGE_NAME i cpu=0 name
  _stage_end
  # A background job not waited for (a stage before its wait failed) ends by itself:
  # wait for it, so that no build outlives the run.
  for name in "${!_STAGE_BG_PID[@]}"; do
    wait "${_STAGE_BG_PID[$name]}" 2>/dev/null || true
  done
  [ ${#_STAGE_NAMES[@]} -eq 0 ] && return "$status"
  echo "== time per stage (wall, and CPU of its processes; load average $_STAGE_LOAD_START at \
the start, $(_stage_load) at the end)"
  for i in "${!_STAGE_NAMES[@]}"; do
    printf '  %-24s %6d s %6d s cpu\n' "${_STAGE_NAMES[$i]}" "${_STAGE_SECONDS[$i]}" \
      "${_STAGE_CPU[$i]}"
    cpu=$((cpu + _STAGE_CPU[i]))
  done
  local wall=$((SECONDS - _STAGE_CLOCK_START)) cores
  printf '  %-24s %6d s %6d s cpu\n' "total" "$wall" "$cpu"
  # How well the stages kept the cores busy: the run's CPU over cores x wall (on a quiet
  # machine, what the overlap leaves idle; on a shared one, mostly the others' load).
  cores=$(nproc 2>/dev/null || echo 1)
  echo "== cores busy: $((100 * cpu / (cores * (wall > 0 ? wall : 1))))% of $cores \
(CPU seconds over cores x wall seconds)"
  if [ "$status" -ne 0 ] && [ -n "$failed" ]; then
    echo "== failed in stage: $failed (exit $status)"
  fi
  return "$status"
}

# worker_ends TIMINGS: when each xdist worker of a stage ended its last test (the
# --timings file's worker and end columns, seconds after the stage's first test began),
# in one line: the gap between them is the time a core sat idle at the stage's end.
worker_ends() {
  echo "each worker's last test ended (s after the first began): $(awk -F'\t' \
    'NR > 1 && $7 > end[$6] { end[$6] = $7 } END { for (w in end) printf "%s %.1f\n", w, end[w] }' \
    "$1" | sort | paste -sd ' ')"
}
